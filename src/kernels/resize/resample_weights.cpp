#include "stoker/kernels/resize/resample_weights.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "stoker/core/error.hpp"

namespace stoker::kernels {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr int64_t kMaxTaps = 64;  // on the stack; wider (extreme downscales) on the heap

double filter_radius(Filter f) {
  switch (f) {
    case Filter::kCubic:
      return 2.0;
    case Filter::kLanczos3:
      return 3.0;
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
    default:
      return x < 1 ? 1 - x : 0;
  }
}

// DALI's Gaussian filter (resampling_filters.cu, resampling_setup.cc, resampling_impl_cpu.cc),
// in float as DALI computes it, so that the weights are DALI's to the last bit: exp(-x^2)
// tabulated at 65 points over x in [-2, 2], read with linear interpolation (ramping to 0 over
// one entry past either end) and stretched over 2R source pixels (sigma = R / (2 sqrt 2)), R the
// scale when antialiasing a shrink, else 1. Output pixel i takes ceil(2R) taps from the first
// pixel at or after its window's start, normalised over all of them; taps past the image repeat
// its edge pixel (DALI's kernels clamp the index), so their weights go to the edge pixel's.
ResampleWeights gaussian_weights(int64_t in_size, int64_t out_size, bool antialias, double roi_lo,
                                 double roi_hi) {
  constexpr int kEntries = 65;
  static const auto table = [] {
    std::array<float, kEntries> t{};
    for (int i = 0; i < kEntries; ++i) {
      const float x = 4 * (float(i) - (kEntries - 1) * 0.5f) / (kEntries - 1);
      t[size_t(i)] = std::exp(-x * x);
    }
    return t;
  }();
  const auto at = [](float x) {  // ResamplingFilter::operator()
    if (!(x > -1) || x >= kEntries) return 0.f;
    const int x0 = int(std::floor(x)), x1 = x0 + 1;
    const float d = x - float(x0);
    const float f0 = x0 < 0 ? 0.f : table[size_t(x0)];
    const float f1 = x1 >= kEntries ? 0.f : table[size_t(x1)];
    return f0 + d * (f1 - f0);
  };
  const float lo = float(roi_lo), hi = float(roi_hi);
  const float extent = std::abs(hi - lo);
  const float radius = antialias && float(out_size) < extent ? extent / float(out_size) : 1.f;
  const auto sigma = float(double(radius * 0.5f) / kSqrt2);
  const float width = std::max(1.f, float(4 * kSqrt2) * sigma);
  const float scale = float(kEntries - 1) / width;     // table entries per source pixel
  const float anchor = (kEntries - 1) * 0.5f / scale;  // the table's centre, in source pixels
  const auto taps = int64_t(std::ceil(float(kEntries - 1) / scale));
  const float step = (hi - lo) / float(out_size);
  const float start = lo + (0.5f * step - 0.5f - anchor);
  ResampleWeights w;
  w.out_size = out_size;
  w.support = int(std::min(taps, in_size));
  w.first.resize(size_t(out_size));
  w.count.resize(size_t(out_size));
  w.weights.assign(size_t(out_size) * size_t(w.support), 0.f);
  for (int64_t i = 0; i < out_size; ++i) {
    const float s = float(i) * step + start;
    const auto first = int64_t(std::ceil(s));
    const float frac = float(first) - s;
    // Each tap is read twice (for the sum, then normalised) rather than kept: a region far
    // larger than the image has more taps than pixels, and only the pixels take memory. The
    // first tap lies inside the table (at most 64 entries per pixel), so the sum is positive.
    float sum = 0;
    for (int64_t k = 0; k < taps; ++k) sum += at((frac + float(k)) * scale);
    const int64_t lo_px = std::clamp<int64_t>(first, 0, in_size - 1);
    const int64_t hi_px = std::clamp<int64_t>(first + taps - 1, 0, in_size - 1);
    w.first[size_t(i)] = lo_px;
    w.count[size_t(i)] = int(hi_px - lo_px + 1);
    float* out = &w.weights[size_t(i) * size_t(w.support)];
    for (int64_t k = 0; k < taps; ++k)
      out[std::clamp<int64_t>(first + k, 0, in_size - 1) - lo_px] +=
          at((frac + float(k)) * scale) / sum;
  }
  return w;
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
  throw ValueError("'" + name +
                   "' is not supported (nn, linear, triangular, cubic, lanczos3, "
                   "gaussian)");
}

ResampleWeights resample_weights(int64_t in_size, int64_t out_size, Filter filter, bool antialias) {
  return resample_weights(in_size, out_size, filter, antialias, 0.0, double(in_size));
}

ResampleWeights resample_weights(int64_t in_size, int64_t out_size, Filter filter, bool antialias,
                                 double roi_lo, double roi_hi, bool vertical, int64_t nn_shift) {
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
    // 64 -> 24: 10.5 * 64 / 24 = 28) goes the same way: columns directly, rows accumulated,
    // from the region's start less nn_shift (added back to the pixel found).
    const float fstep = float(roi_hi - roi_lo) / float(out_size);
    const float origin = float(roi_lo) - float(nn_shift);
    float c = origin + 0.5f * fstep;
    for (int64_t i = 0; i < out_size; ++i, c += fstep) {
      const float centre = vertical ? c : origin + (float(i) + 0.5f) * fstep;
      w.first[size_t(i)] =
          std::clamp<int64_t>(int64_t(std::floor(centre)) + nn_shift, 0, in_size - 1);
    }
    return w;
  }
  if (filter == Filter::kGaussian)
    return gaussian_weights(in_size, out_size, antialias, roi_lo, roi_hi);
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

std::pair<int64_t, int64_t> nn_origin_shift(int64_t in_h, int64_t in_w, int64_t out_h,
                                            int64_t out_w, double y0, double y1, double x0,
                                            double x1) {
  // The pixels [lo, hi) one axis reads (DALI's ComputeScaleAndROI for a 1-tap filter), and the
  // pass order its cost model picks (the vertical pass first when its intermediate, the columns
  // read times the output's rows, is the smaller): the first pass moves its axis's origin.
  const auto span = [](double a, double b, int64_t in) {
    const float s = float(std::min(a, b)), e = float(std::max(a, b));
    const auto clamp = [&](float v) { return std::clamp<int64_t>(int64_t(std::floor(v)), 0, in); };
    return std::pair{clamp(s), clamp(e + 1.f)};
  };
  const auto [ly, hy] = span(y0, y1, in_h);
  const auto [lx, hx] = span(x0, x1, in_w);
  const bool vertical_first = (hx - lx) * out_h < (hy - ly) * out_w;
  return vertical_first ? std::pair<int64_t, int64_t>{0, lx} : std::pair<int64_t, int64_t>{ly, 0};
}

}  // namespace stoker::kernels
