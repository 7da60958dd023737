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
    double sum = 0;
    double taps[64];
    int n = 0;
    for (int64_t j = lo; j <= hi; ++j, ++n) {
      double d = std::fabs(double(j) + 0.5 - centre) / radius;
      taps[n] = d < 1.0 ? 1.0 - d : 0.0;
      sum += taps[n];
    }
    w.first[size_t(i)] = lo;
    float* out = &w.weights[size_t(i) * size_t(w.support)];
    for (int k = 0; k < n; ++k) out[k] = float(taps[k] / sum);
  }
  return w;
}

}  // namespace stoker::kernels
