#include "stoker/kernels/filter/gaussian_blur_cpu.hpp"

#include <gtest/gtest.h>

#include <random>

namespace stoker::kernels {
namespace {

// A direct 2-D convolution with the outer product of the windows, mirrored borders written
// out case by case: the reference.
double ref_pixel(const std::vector<float>& img, int64_t h, int64_t w, int64_t c, int64_t y,
                 int64_t x, int64_t ch, const std::vector<float>& ky,
                 const std::vector<float>& kx) {
  auto mirror = [](int64_t i, int64_t n) {
    if (n == 1) return int64_t(0);
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  };
  const int64_t ry = int64_t(ky.size()) / 2, rx = int64_t(kx.size()) / 2;
  double v = 0;
  for (int64_t dy = -ry; dy <= ry; ++dy)
    for (int64_t dx = -rx; dx <= rx; ++dx)
      v += double(ky[size_t(dy + ry)]) * kx[size_t(dx + rx)] *
           img[size_t((mirror(y + dy, h) * w + mirror(x + dx, w)) * c + ch)];
  return v;
}

TEST(GaussianBlurCpu, MatchesDirectConvolutionWithMirroredBorders) {
  std::mt19937 rng(2);
  for (auto [h, w, c, sy, sx] : {std::tuple{9, 13, 3, 1.0, 2.5},
                                 {1, 7, 1, 0.7, 0.7},
                                 {4, 3, 2, 3.0, 0.5}}) {  // windows wider than the image
    std::vector<float> img(size_t(h * w * c));
    for (auto& v : img) v = float(rng() % 256);
    auto ky = gaussian_window(sy, 0), kx = gaussian_window(sx, 0);
    std::vector<float> out(img.size()), scratch;
    gaussian_blur_cpu(img.data(), h, w, c, ky, kx, out.data(), scratch);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t ch = 0; ch < c; ++ch)
          ASSERT_NEAR(out[size_t((y * w + x) * c + ch)], ref_pixel(img, h, w, c, y, x, ch, ky, kx),
                      1e-3);
  }
}

TEST(GaussianBlurCpu, WindowsFollowDalisRules) {
  auto k = gaussian_window(1.0, 0);
  EXPECT_EQ(k.size(), 7u);  // 2 * ceil(3 * 1) + 1
  double sum = 0;
  for (float v : k) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_NEAR(k[3] / k[4], std::exp(0.5), 1e-5);  // exp(-k^2 / 2) at sigma 1
  auto w5 = gaussian_window(0, 5);                // sigma = (2 - 1) * 0.3 + 0.8 = 1.1
  EXPECT_NEAR(w5[2] / w5[3], std::exp(1 / (2 * 1.1 * 1.1)), 1e-5);
  EXPECT_EQ(gaussian_window(0, 0).size(), 1u);
  EXPECT_THROW(gaussian_window(1.0, 4), ValueError);
}

}  // namespace
}  // namespace stoker::kernels
