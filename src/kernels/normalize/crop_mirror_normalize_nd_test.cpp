// The N-D crop_mirror_normalize kernel against the image kernel (an HWC window inside the image,
// HWC and CHW output, mirrored) and against a per-element reference (a CDHW volume cut partly
// outside, transposed to DHWC, with padded channels).
#include "stoker/kernels/normalize/crop_mirror_normalize_nd.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace stoker::kernels {
namespace {

TEST(CropMirrorNormalizeNd, EqualsTheImageKernelOnWindowsInside) {
  const int64_t H = 9, W = 13, C = 3, y = 2, x = 3, h = 5, w = 7;
  std::vector<uint8_t> img(size_t(H * W * C));
  for (size_t k = 0; k < img.size(); ++k) img[k] = uint8_t(k * 37 + 11);
  const std::vector<float> mean = {10, 20, 30}, inv = {0.5f, 0.25f, 2.f}, fill = {0, 0, 0, 0};
  for (bool planar : {false, true}) {
    for (bool mirror : {false, true}) {
      const int64_t OC = 4;
      std::vector<float> want(size_t(h * w * OC)), got(want.size(), -1.f);
      ImageView<const uint8_t> src{img.data(), H, W, C, W * C};
      crop_mirror_normalize_cpu<float, uint8_t>(want.data(), src.window(y, x, h, w),
                                                {mean, inv, 1.5f, mirror, planar, OC});
      CmnNdSample s;
      s.in = img.data(), s.out = got.data(), s.ndim = 3, s.mean = mean.data(),
      s.inv_std = inv.data(), s.fill = fill.data(), s.shift = 1.5f;
      // Input axes H, W, C (strides W*C, C, 1) shown in the output order.
      const int64_t in_shape[3] = {h, w, OC}, start[3] = {y, x, 0}, extent[3] = {H, W, C},
                    stride[3] = {W * C, C, 1};
      const int order[2][3] = {{0, 1, 2}, {2, 0, 1}};
      for (int j = 0; j < 3; ++j) {
        const int a = order[planar][j];
        s.shape[j] = in_shape[a], s.start[j] = start[a], s.extent[j] = extent[a];
        s.stride[j] = stride[a], s.step[j] = 1;
        if (a == 1 && mirror) s.start[j] += w - 1, s.step[j] = -1;
        if (a == 2) s.c_axis = j;
      }
      crop_mirror_normalize_nd_cpu<float, uint8_t>(s);
      EXPECT_EQ(got, want) << "planar " << planar << " mirror " << mirror;
    }
  }
}

TEST(CropMirrorNormalizeNd, PadsOutsideAndPaddedChannelsWithTheRawFill) {
  // CDHW 2x3x4x5 input; window depth 4 from -1, height 2 from 2 (one row outside), width 5
  // mirrored; output DHWC with 4 channels (two padded).
  const int64_t C = 2, D = 3, H = 4, W = 5;
  std::vector<int16_t> vol(size_t(C * D * H * W));
  for (size_t k = 0; k < vol.size(); ++k) vol[k] = int16_t(int(k) * 7 - 100);
  const std::vector<float> mean = {1, -2}, inv = {0.5f, 3.f}, fill = {-7.f, 300.f, 9.f, 1e6f};
  const int64_t od = 4, oh = 2, ow = 5, oc = 4;
  std::vector<uint8_t> got(size_t(od * oh * ow * oc));
  CmnNdSample s;
  s.in = vol.data(), s.out = got.data(), s.ndim = 4, s.c_axis = 3;
  s.mean = mean.data(), s.inv_std = inv.data(), s.fill = fill.data(), s.shift = 4.f;
  const int64_t shape[4] = {od, oh, ow, oc}, start[4] = {-1, 3, W - 1, 0}, step[4] = {1, 1, -1, 1},
                extent[4] = {D, H, W, C}, stride[4] = {H * W, W, 1, D * H * W};
  for (int j = 0; j < 4; ++j)
    s.shape[j] = shape[j], s.start[j] = start[j], s.step[j] = step[j], s.extent[j] = extent[j],
    s.stride[j] = stride[j];
  crop_mirror_normalize_nd_cpu<uint8_t, int16_t>(s);
  size_t e = 0;
  for (int64_t d = 0; d < od; ++d)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t c = 0; c < oc; ++c, ++e) {
          const int64_t id = d - 1, iy = y + 3, ix = W - 1 - x;
          const bool inside = id >= 0 && id < D && iy < H && c < C;
          const float v =
              inside ? (float(vol[size_t(((c * D + id) * H + iy) * W + ix)]) - mean[size_t(c)]) *
                               inv[size_t(c)] +
                           4.f
                     : fill[size_t(c)];
          ASSERT_EQ(got[e], convert_sat<uint8_t>(v)) << d << " " << y << " " << x << " " << c;
        }
}

}  // namespace
}  // namespace stoker::kernels
