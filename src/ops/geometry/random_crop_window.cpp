#include "stoker/ops/geometry/random_crop_window.hpp"

#include <cmath>

namespace stoker::ops {

CropWindow random_resized_crop_window(int64_t H, int64_t W, double area_lo, double area_hi,
                                      double aspect_lo, double aspect_hi, int num_attempts,
                                      RandomStream& rng) {
  const double area = double(H) * double(W);
  const double log_lo = std::log(aspect_lo), log_hi = std::log(aspect_hi);
  for (int attempt = 0; attempt < num_attempts; ++attempt) {
    double target = area * (area_lo + (area_hi - area_lo) * double(rng.uniform()));
    double aspect = std::exp(log_lo + (log_hi - log_lo) * double(rng.uniform()));
    auto w = int64_t(std::nearbyint(std::sqrt(target * aspect)));
    auto h = int64_t(std::nearbyint(std::sqrt(target / aspect)));
    if (w > 0 && w <= W && h > 0 && h <= H) {
      int64_t y = rng.below(uint32_t(H - h + 1));
      int64_t x = rng.below(uint32_t(W - w + 1));
      return {y, x, h, w};
    }
  }
  const double in_ratio = double(W) / double(H);
  int64_t w = W, h = H;
  if (in_ratio < aspect_lo) {
    h = int64_t(std::nearbyint(double(W) / aspect_lo));
  } else if (in_ratio > aspect_hi) {
    w = int64_t(std::nearbyint(double(H) * aspect_hi));
  }
  return {(H - h) / 2, (W - w) / 2, h, w};
}

}  // namespace stoker::ops
