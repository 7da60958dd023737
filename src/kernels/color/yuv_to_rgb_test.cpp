#include "stoker/kernels/color/yuv_to_rgb.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// The definition in doubles: chroma positions from the siting, bilinear interpolation between
// the nearest samples (edges repeat), then the standard's matrix from its Kr and Kb.
double chroma_ref(const std::vector<uint8_t>& plane, int64_t cw, int64_t ch, int sx, int sy,
                  bool center, int64_t x, int64_t y) {
  // Chroma sample j sits at luma coordinate j * 2^s + offset.
  const double ox = sx == 0 ? 0.0 : (center ? 0.5 : 0.0);
  const double oy = sy == 0 ? 0.0 : 0.5;  // 4:2:0 chroma is between luma rows either way
  const double fx = (double(x) - ox) / double(1 << sx), fy = (double(y) - oy) / double(1 << sy);
  auto at = [&](int64_t i, int64_t j) {
    i = std::clamp<int64_t>(i, 0, cw - 1), j = std::clamp<int64_t>(j, 0, ch - 1);
    return double(plane[size_t(j * cw + i)]);
  };
  const int64_t i0 = int64_t(std::floor(fx)), j0 = int64_t(std::floor(fy));
  const double ax = fx - double(i0), ay = fy - double(j0);
  return (1 - ay) * ((1 - ax) * at(i0, j0) + ax * at(i0 + 1, j0)) +
         ay * ((1 - ax) * at(i0, j0 + 1) + ax * at(i0 + 1, j0 + 1));
}

void rgb_ref(double y, double cb, double cr, bool bt709, bool full, double out[3]) {
  const double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1 - kr - kb;
  const double yy = full ? y : (y - 16) * 255.0 / 219.0;
  const double s = full ? 1.0 : 255.0 / 224.0;
  const double u = (cb - 128) * s, v = (cr - 128) * s;
  out[0] = yy + 2 * (1 - kr) * v;
  out[1] = yy - 2 * (1 - kb) * kb / kg * u - 2 * (1 - kr) * kr / kg * v;
  out[2] = yy + 2 * (1 - kb) * u;
}

struct Case {
  int sx, sy;
  bool center, full, bt709;
  int64_t w, h;
};

class YuvToRgb : public ::testing::TestWithParam<Case> {};

TEST_P(YuvToRgb, MatchesTheDefinition) {
  const Case c = GetParam();
  const int64_t cw = (c.w + (1 << c.sx) - 1) >> c.sx, ch = (c.h + (1 << c.sy) - 1) >> c.sy;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> y(size_t(c.w * c.h)), u(size_t(cw * ch)), v(size_t(cw * ch));
  for (auto& b : y) b = uint8_t(byte(rng));
  for (auto& b : u) b = uint8_t(byte(rng));
  for (auto& b : v) b = uint8_t(byte(rng));
  YuvPlanes p;
  p.y = y.data(), p.u = u.data(), p.v = v.data();
  p.y_pitch = c.w, p.uv_pitch = cw, p.uv_step = 1, p.shift_x = c.sx, p.shift_y = c.sy;
  p.chroma_center = c.center, p.full_range = c.full;
  p.matrix = c.bt709 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
  p.width = c.w, p.height = c.h;
  std::vector<uint8_t> rgb8(size_t(c.w * c.h * 3)), ycc8(rgb8.size());
  std::vector<float> rgbf(rgb8.size()), normf(rgb8.size());
  yuv_to_rgb_cpu(p, true, false, rgb8.data());
  yuv_to_rgb_cpu(p, false, false, ycc8.data());
  yuv_to_rgb_cpu(p, true, false, rgbf.data());
  yuv_to_rgb_cpu(p, true, true, normf.data());
  for (int64_t yy = 0; yy < c.h; ++yy) {
    for (int64_t xx = 0; xx < c.w; ++xx) {
      const double cb = chroma_ref(u, cw, ch, c.sx, c.sy, c.center, xx, yy);
      const double cr = chroma_ref(v, cw, ch, c.sx, c.sy, c.center, xx, yy);
      double ref[3];
      rgb_ref(y[size_t(yy * c.w + xx)], cb, cr, c.bt709, c.full, ref);
      const double ycc[3] = {double(y[size_t(yy * c.w + xx)]), cb, cr};
      for (int k = 0; k < 3; ++k) {
        const size_t at = size_t((yy * c.w + xx) * 3 + k);
        const double r = std::clamp(ref[k], 0.0, 255.0);
        // Fixed-point coefficients (2^-14) and exact chroma: within 0.02 of the real value;
        // floats unclamped.
        ASSERT_NEAR(rgbf[at], ref[k], 0.02) << xx << "," << yy << " c" << k;
        ASSERT_NEAR(normf[at], ref[k] / 255.0, 0.02 / 255.0);
        ASSERT_LE(std::abs(double(rgb8[at]) - r), 0.52) << xx << "," << yy << " c" << k;
        ASSERT_LE(std::abs(double(ycc8[at]) - ycc[k]), 0.5) << xx << "," << yy << " c" << k;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sitings, YuvToRgb,
    ::testing::Values(Case{1, 1, false, false, false, 17, 9},  // 4:2:0, H.264's siting, odd sizes
                      Case{1, 1, true, false, false, 16, 10},  // 4:2:0, JPEG's siting
                      Case{1, 1, false, true, true, 15, 7},    // full range, BT.709
                      Case{1, 1, false, false, true, 8, 8},    // limited BT.709
                      Case{1, 0, false, true, false, 11, 5},   // 4:2:2
                      Case{0, 0, false, false, false, 6, 3},   // 4:4:4
                      Case{1, 1, false, false, false, 1, 1}));  // one pixel

TEST_P(YuvToRgb, TheFrameFunctionEqualsThePixelFunction) {
  // yuv_to_rgb_cpu's row-wise sums against yuv_pixel (what the GPU kernel runs), every mode.
  const Case c = GetParam();
  const int64_t cw = (c.w + (1 << c.sx) - 1) >> c.sx, ch = (c.h + (1 << c.sy) - 1) >> c.sy;
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> y(size_t(c.w * c.h)), uv(size_t(cw * ch * 2));
  for (auto& b : y) b = uint8_t(byte(rng));
  for (auto& b : uv) b = uint8_t(byte(rng));
  YuvPlanes p;
  p.y = y.data(), p.u = uv.data(), p.v = uv.data() + 1, p.uv_step = 2;  // interleaved
  p.y_pitch = c.w, p.uv_pitch = cw * 2, p.shift_x = c.sx, p.shift_y = c.sy;
  p.chroma_center = c.center, p.full_range = c.full;
  p.matrix = c.bt709 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
  p.width = c.w, p.height = c.h;
  for (bool rgb : {true, false}) {
    std::vector<uint8_t> u8(size_t(c.w * c.h * 3));
    std::vector<float> f32(u8.size());
    yuv_to_rgb_cpu(p, rgb, false, u8.data());
    yuv_to_rgb_cpu(p, rgb, true, f32.data());
    for (int64_t yy = 0; yy < c.h; ++yy)
      for (int64_t xx = 0; xx < c.w; ++xx) {
        int32_t v[3];
        yuv_pixel(p, rgb, xx, yy, v);
        for (int k = 0; k < 3; ++k) {
          const size_t at = size_t((yy * c.w + xx) * 3 + k);
          ASSERT_EQ(u8[at], yuv_to_u8(v[k])) << xx << "," << yy;
          ASSERT_EQ(f32[at], yuv_to_float(v[k], true)) << xx << "," << yy;
        }
      }
  }
}

TEST(YuvToRgbKnown, GreyWhiteAndBlackOfBothRanges) {
  // Limited-range 16/235 with neutral chroma are black and white; full range 0/255.
  const uint8_t luma[4] = {16, 235, 0, 255}, neutral[4] = {128, 128, 128, 128};
  YuvPlanes p;
  p.y = luma, p.u = neutral, p.v = neutral, p.y_pitch = 4, p.uv_pitch = 4;
  p.shift_x = p.shift_y = 0, p.width = 4, p.height = 1;
  uint8_t out[12];
  yuv_to_rgb_cpu(p, true, false, out);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[3], 255);
  EXPECT_EQ(out[6], 0);    // below black: saturated
  EXPECT_EQ(out[9], 255);  // above white: saturated
  p.full_range = true;
  yuv_to_rgb_cpu(p, true, false, out);
  EXPECT_EQ(out[0], 16);
  EXPECT_EQ(out[6], 0);
  EXPECT_EQ(out[9], 255);
}

TEST(YuvToRgbKnown, InterleavedChromaOfNv12) {
  // NV12: one chroma plane of Cb, Cr pairs (uv_step 2) gives what two planes give.
  const int64_t w = 6, h = 4;
  std::vector<uint8_t> y(size_t(w * h)), u(6), v(6), uv(12);
  for (size_t i = 0; i < y.size(); ++i) y[i] = uint8_t(20 + 9 * i);
  for (size_t i = 0; i < 6; ++i) u[i] = uint8_t(60 + 25 * i), v[i] = uint8_t(200 - 21 * i);
  for (size_t i = 0; i < 6; ++i) uv[2 * i] = u[i], uv[2 * i + 1] = v[i];
  YuvPlanes planar;
  planar.y = y.data(), planar.u = u.data(), planar.v = v.data();
  planar.y_pitch = w, planar.uv_pitch = 3, planar.width = w, planar.height = h;
  YuvPlanes nv12 = planar;
  nv12.u = uv.data(), nv12.v = uv.data() + 1, nv12.uv_pitch = 6, nv12.uv_step = 2;
  std::vector<uint8_t> a(size_t(w * h * 3)), b(a.size());
  yuv_to_rgb_cpu(planar, true, false, a.data());
  yuv_to_rgb_cpu(nv12, true, false, b.data());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace stoker::kernels
