#include "stoker/kernels/resize/resample_weights.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "stoker/core/error.hpp"

namespace stoker::kernels {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int64_t kMaxTaps = 64;  // on the stack; wider (extreme downscales) on the heap

double filter_radius(Filter f) {
  switch (f) {
    case Filter::kCubic:
      return 2.0;
    case Filter::kLanczos3:
      return 3.0;
    case Filter::kGaussian:
      return 1.5;
    default:
      return 1.0;
  }
}

double sinc(double x) { return x == 0 ? 1.0 : std::sin(kPi * x) / (kPi * x); }

double filter_value(Filter f, double x) {
  x = std::fabs(x);
  switch (f) {
    case Filter::kCubic: {
      constexpr double a = -0.5;
      if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
      if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
      return 0;
    }
    case Filter::kLanczos3:
      return x < 3 ? sinc(x) * sinc(x / 3) : 0;
    case Filter::kGaussian:
      return x < 1.5 ? std::exp(-x * x / (2 * 0.25)) : 0;
    default:
      return x < 1 ? 1 - x : 0;
  }
}

}  // namespace

Filter parse_filter(const std::string& name) {
  std::string n;
  for (char ch : name) n += char(std::tolower(static_cast<unsigned char>(ch)));
  if (n.rfind("interp_", 0) == 0) n = n.substr(7);
  if (n == "nn" || n == "nearest") return Filter::kNearest;
  if (n == "linear") return Filter::kLinear;
  // DALI 2.4's triangular is linear, antialiased only as `antialias` says (with
  // antialias=False it gives linear's pixels exactly: measured).
  if (n == "triangular") return Filter::kLinear;
  if (n == "cubic") return Filter::kCubic;
  if (n == "lanczos3") return Filter::kLanczos3;
  if (n == "gaussian") return Filter::kGaussian;
  throw ValueError("'" + name + "' is not supported (nn, linear, triangular, cubic, lanczos3, "
                   "gaussian)");
}

ResampleWeights resample_weights(int64_t in_size, int64_t out_size, Filter filter, bool antialias) {
  return resample_weights(in_size, out_size, filter, antialias, 0.0, double(in_size));
}

ResampleWeights resample_weights(int64_t in_size, int64_t out_size, Filter filter, bool antialias,
                                 double roi_lo, double roi_hi, bool vertical) {
  STOKER_ENFORCE(in_size > 0 && out_size > 0, ValueError, "cannot resample ", in_size, " to ",
                 out_size, " pixels: extents must be positive");
  STOKER_ENFORCE(roi_lo != roi_hi && std::isfinite(roi_lo) && std::isfinite(roi_hi), ValueError,
                 "cannot resample the empty region [", roi_lo, ", ", roi_hi, ")");
  // step < 0 walks the region backwards (a flip); the filter widens by |step|.
  const double step = (roi_hi - roi_lo) / double(out_size);
  const double scale = std::fabs(step);
  ResampleWeights w;
  w.out_size = out_size;
  w.first.resize(size_t(out_size));
  w.count.assign(size_t(out_size), 1);
  if (filter == Filter::kNearest) {
    w.support = 1;
    w.weights.assign(size_t(out_size), 1.f);
    // In float, as DALI computes it, so that a pixel centre on a pixel boundary (row 10 of
    // 64 -> 24: 10.5 * 64 / 24 = 28) goes the same way: columns directly, rows accumulated.
    const float fstep = float(roi_hi - roi_lo) / float(out_size);
    float c = float(roi_lo) + 0.5f * fstep;
    for (int64_t i = 0; i < out_size; ++i, c += fstep) {
      const float centre = vertical ? c : float(roi_lo) + (float(i) + 0.5f) * fstep;
      w.first[size_t(i)] = std::clamp<int64_t>(int64_t(std::floor(centre)), 0, in_size - 1);
    }
    return w;
  }
  const double stretch = (antialias && scale > 1.0) ? scale : 1.0;
  const double radius = filter_radius(filter) * stretch;
  w.support = int(std::ceil(radius)) * 2 + 2;  // taps in (c - r - 0.5, c + r - 0.5], ends inclusive
  w.weights.assign(size_t(out_size) * size_t(w.support), 0.f);
  for (int64_t i = 0; i < out_size; ++i) {
    const double centre = roi_lo + (double(i) + 0.5) * step;
    int64_t lo = std::max<int64_t>(0, int64_t(std::floor(centre - radius - 0.5)));
    int64_t hi = std::min<int64_t>(in_size - 1, int64_t(std::ceil(centre + radius - 0.5)));
    if (lo > hi || lo >= in_size || hi < 0) {  // a region reaching beyond the image: the edge
      w.first[size_t(i)] = std::clamp<int64_t>(int64_t(std::floor(centre)), 0, in_size - 1);
      w.weights[size_t(i) * size_t(w.support)] = 1.f;
      continue;
    }
    STOKER_ASSERT(hi - lo + 1 <= w.support, "support ", w.support, " too small");
    // Taps go straight into this output's row of the table (support entries, asserted
    // above), so any downscale factor fits: no fixed-size scratch. Two passes keep the
    // normalisation in double.
    // Each tap is evaluated once (kept in double until normalised).
    double taps[kMaxTaps];
    double* tap = hi - lo + 1 <= kMaxTaps ? taps : nullptr;
    std::vector<double> big;
    if (!tap) big.resize(size_t(hi - lo + 1)), tap = big.data();
    double sum = 0;
    for (int64_t j = lo; j <= hi; ++j)
      sum += tap[j - lo] = filter_value(filter, (double(j) + 0.5 - centre) / stretch);
    float* out = &w.weights[size_t(i) * size_t(w.support)];
    if (sum == 0) {  // every tap at a zero of the filter (only far outside the image)
      w.first[size_t(i)] = std::clamp<int64_t>(int64_t(std::floor(centre)), 0, in_size - 1);
      out[0] = 1.f;
      continue;
    }
    const double inv = 1.0 / sum;
    for (int64_t j = lo; j <= hi; ++j) out[j - lo] = float(tap[j - lo] * inv);
    w.first[size_t(i)] = lo;
    w.count[size_t(i)] = int(hi - lo + 1);
  }
  return w;
}

}  // namespace stoker::kernels
