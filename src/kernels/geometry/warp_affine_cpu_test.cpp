#include "stoker/kernels/geometry/warp_affine_cpu.hpp"

#include <gtest/gtest.h>

#include <random>

namespace stoker::kernels {
namespace {

// Bilinear as a tent-weighted sum over every input pixel (weights max(0, 1 - |d|) per axis),
// with out-of-image pixels contributing the fill: a different formulation from the kernel's.
double ref_linear(const std::vector<float>& img, int64_t h, int64_t w, double sx, double sy,
                  float fill) {
  double v = 0;
  for (int64_t y = int64_t(std::floor(sy - 0.5)); y <= int64_t(std::floor(sy - 0.5)) + 1; ++y)
    for (int64_t x = int64_t(std::floor(sx - 0.5)); x <= int64_t(std::floor(sx - 0.5)) + 1; ++x) {
      const double wx = std::max(0.0, 1 - std::fabs(sx - (x + 0.5)));
      const double wy = std::max(0.0, 1 - std::fabs(sy - (y + 0.5)));
      const bool in = x >= 0 && y >= 0 && x < w && y < h;
      v += wx * wy * (in ? img[size_t(y * w + x)] : fill);
    }
  return v;
}

TEST(WarpAffineCpu, LinearMatchesTentWeightsAndNearestPicksTheContainingPixel) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  const int64_t h = 11, w = 13;
  std::vector<float> img(size_t(h * w));
  for (auto& v : img) v = float(rng() % 256);
  const std::vector<float> fill{-3.f};
  for (int t = 0; t < 20; ++t) {
    Affine m{1 + u(rng) / 3, u(rng) / 3, u(rng) * 4, u(rng) / 3, 1 + u(rng) / 3, u(rng) * 4};
    std::vector<float> lin(size_t(9 * 15)), nn(lin.size());
    warp_affine_cpu(img.data(), h, w, 1, lin.data(), 9, 15, m, true, &fill);
    warp_affine_cpu(img.data(), h, w, 1, nn.data(), 9, 15, m, false, &fill);
    for (int64_t y = 0; y < 9; ++y)
      for (int64_t x = 0; x < 15; ++x) {
        const double sx = m[0] * (x + 0.5) + m[1] * (y + 0.5) + m[2];
        const double sy = m[3] * (x + 0.5) + m[4] * (y + 0.5) + m[5];
        ASSERT_NEAR(lin[size_t(y * 15 + x)], ref_linear(img, h, w, sx, sy, -3.f), 1e-3);
        const int64_t ix = int64_t(std::floor(sx)), iy = int64_t(std::floor(sy));
        const bool in = ix >= 0 && iy >= 0 && ix < w && iy < h;
        ASSERT_EQ(nn[size_t(y * 15 + x)], in ? img[size_t(iy * w + ix)] : -3.f);
      }
  }
}

}  // namespace
}  // namespace stoker::kernels
