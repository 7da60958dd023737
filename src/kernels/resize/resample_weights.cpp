#include "stoker/kernels/resize/resample_weights.hpp"

#include <algorithm>
#include <cmath>

#include "stoker/core/error.hpp"

namespace stoker::kernels {

ResampleWeights linear_resample_weights(int64_t in_size, int64_t out_size, bool antialias) {
  STOKER_ENFORCE(in_size > 0 && out_size > 0, ValueError, "cannot resample ", in_size, " to ",
                 out_size, " pixels: extents must be positive");
  const double scale = double(in_size) / double(out_size);
  const double radius = (antialias && scale > 1.0) ? scale : 1.0;
  ResampleWeights w;
  w.out_size = out_size;
  w.support = int(std::ceil(radius)) * 2 + 2;  // taps in (c - r - 0.5, c + r - 0.5], ends inclusive
  w.first.resize(size_t(out_size));
  w.weights.assign(size_t(out_size) * size_t(w.support), 0.f);
  for (int64_t i = 0; i < out_size; ++i) {
    const double centre = (double(i) + 0.5) * scale;
    int64_t lo = std::max<int64_t>(0, int64_t(std::floor(centre - radius - 0.5)));
    int64_t hi = std::min<int64_t>(in_size - 1, int64_t(std::ceil(centre + radius - 0.5)));
    STOKER_ASSERT(hi - lo + 1 <= w.support, "support ", w.support, " too small");
    // Taps go straight into this output's row of the table (support entries, asserted
    // above), so any downscale factor fits: no fixed-size scratch. Two passes keep the
    // normalisation in double.
    auto tap = [&](int64_t j) {
      double d = std::fabs(double(j) + 0.5 - centre) / radius;
      return d < 1.0 ? 1.0 - d : 0.0;
    };
    double sum = 0;
    for (int64_t j = lo; j <= hi; ++j) sum += tap(j);
    float* out = &w.weights[size_t(i) * size_t(w.support)];
    for (int64_t j = lo; j <= hi; ++j) out[j - lo] = float(tap(j) / sum);
    w.first[size_t(i)] = lo;
  }
  return w;
}

}  // namespace stoker::kernels
