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

// 8-bit RGB to planar halves or floats takes a vectorised row (16 pixels at a time) that must
// give the generic loops' values bit for bit: the same pixels as 16-bit input (generic loops)
// are the reference, for widths around the 16-pixel groups, mirrored or not, padded or not.
template <typename Out>
void check_vector_row_matches_generic(int64_t W, bool mirror, int64_t out_channels) {
  SCOPED_TRACE(::testing::Message() << "W " << W << " mirror " << mirror << " OC " << out_channels);
  const int64_t H = 3, C = 3;
  auto src = testing::random_image_u8(H, W + 2, C, uint32_t(W));
  std::vector<uint16_t> wide(src.begin(), src.end());
  auto win8 = dense_image<const uint8_t>(src.data(), H, W + 2, C).window(0, 1, H, W);
  auto win16 = dense_image<const uint16_t>(wide.data(), H, W + 2, C).window(0, 1, H, W);
  NormalizeParams p{{123.675f, 116.28f, 103.53f},
                    {1 / 58.395f, 1 / 57.12f, 1 / 57.375f},
                    0.5f,
                    mirror,
                    true,
                    out_channels};
  std::vector<Out> got(size_t(H * W * out_channels), Out(-7.f)), want(got);
  crop_mirror_normalize_cpu<Out, uint8_t>(got.data(), win8, p);
  crop_mirror_normalize_cpu<Out, uint16_t>(want.data(), win16, p);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(float(got[i]), float(want[i])) << "element " << i;
}

TEST(CropMirrorNormalize, VectorisedRgbRowsGiveTheGenericLoopsValues) {
  for (int64_t W : {1, 15, 16, 17, 33, 224})
    for (bool mirror : {false, true}) {
      check_vector_row_matches_generic<float16>(W, mirror, 3);
      check_vector_row_matches_generic<float>(W, mirror, 4);
    }
}

}  // namespace
}  // namespace stoker::kernels
