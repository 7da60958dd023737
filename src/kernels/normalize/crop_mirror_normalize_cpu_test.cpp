#include "stoker/kernels/normalize/crop_mirror_normalize_cpu.hpp"

#include <gtest/gtest.h>

#include "stoker/testing/image_reference.hpp"

namespace stoker::kernels {
namespace {

template <typename Out>
void check(bool mirror, bool planar, int64_t out_channels, double tol) {
  const int64_t H = 13, W = 17, C = 3;
  auto src = testing::random_image_u8(H + 4, W + 6, C, 11);
  auto full = dense_image<const uint8_t>(src.data(), H + 4, W + 6, C);
  auto win = full.window(2, 5, H, W);
  std::vector<double> mean{120.5, 110.25, 100}, sd{58.4, 57.1, 57.4};
  double scale = 1.5, shift = 0.25;
  NormalizeParams p;
  for (int c = 0; c < C; ++c) {
    p.mean.push_back(float(mean[size_t(c)]));
    p.inv_std.push_back(float(scale / sd[size_t(c)]));
  }
  p.shift = float(shift);
  p.mirror = mirror;
  p.planar = planar;
  p.out_channels = out_channels;
  std::vector<Out> out(size_t(H * W * out_channels), Out(-77.f));
  crop_mirror_normalize_cpu<Out, uint8_t>(out.data(), win, p);
  auto ref = testing::normalize_reference(testing::to_ref(win.data, H, W, C, win.row_stride), mean,
                                          sd, scale, shift, mirror);
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x)
      for (int64_t c = 0; c < out_channels; ++c) {
        int64_t o = planar ? (c * H + y) * W + x : (y * W + x) * out_channels + c;
        double expect = c < C ? ref.at(y, x, c) : 0.0;
        ASSERT_NEAR(float(out[size_t(o)]), expect, tol) << y << "," << x << "," << c;
      }
}

TEST(CropMirrorNormalize, F32Hwc) { check<float>(false, false, 3, 1e-5); }
TEST(CropMirrorNormalize, F32ChwMirrored) { check<float>(true, true, 3, 1e-5); }
TEST(CropMirrorNormalize, F16ChwPadded) { check<float16>(true, true, 4, 4e-3); }
TEST(CropMirrorNormalize, F16HwcPadded) { check<float16>(false, false, 4, 4e-3); }

}  // namespace
}  // namespace stoker::kernels
