#include "stoker/kernels/geometry/warp_perspective_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// OpenCV's borderInterpolate as written there: one reflection per loop turn.
int64_t ref_border(int64_t p, int64_t len, WarpBorder mode) {
  if (p >= 0 && p < len) return p;
  if (mode == WarpBorder::kConstant) return -1;
  if (mode == WarpBorder::kReplicate) return p < 0 ? 0 : len - 1;
  if (mode == WarpBorder::kWrap) {
    if (p < 0) p -= ((p - len + 1) / len) * len;
    if (p >= len) p %= len;
    return p;
  }
  const int64_t delta = mode == WarpBorder::kReflect101;
  if (len == 1) return 0;
  do {
    p = p < 0 ? -p - 1 + delta : len - 1 - (p - len) - delta;
  } while (p < 0 || p >= len);
  return p;
}

TEST(WarpPerspectiveCpu, BorderIndexIsOpenCvsBorderInterpolate) {
  for (auto mode : {WarpBorder::kConstant, WarpBorder::kReplicate, WarpBorder::kReflect,
                    WarpBorder::kReflect101, WarpBorder::kWrap})
    for (int64_t len = 1; len < 8; ++len)
      for (int64_t p = -60; p < 60; ++p)
        ASSERT_EQ(border_index(p, len, mode), ref_border(p, len, mode))
            << int(mode) << " " << len << " " << p;
}

// Integer shifts (output (x, y) reads (x + dx, y + dy)) under every border, every interpolation,
// both arithmetic paths (uint8 x 3 takes OpenCV's float path, int16 its fixed-point one): each
// output pixel is the input pixel the border rule names, exactly.
template <typename T>
void check_shifts() {
  std::mt19937 rng(2);
  const int64_t h = 7, w = 11, C = 3;
  std::vector<T> img(size_t(h * w * C)), out(img.size());
  for (auto& v : img) v = T(rng() % 200);
  for (auto mode : {WarpBorder::kConstant, WarpBorder::kReplicate, WarpBorder::kReflect,
                    WarpBorder::kReflect101, WarpBorder::kWrap})
    for (auto interp :
         {PerspectiveInterp::kNearest, PerspectiveInterp::kLinear, PerspectiveInterp::kCubic})
      for (int t = 0; t < 6; ++t) {
        const int64_t dx = int64_t(rng() % 31) - 15, dy = int64_t(rng() % 21) - 10;
        PerspectiveSample s;
        s.in = img.data(), s.out = out.data(), s.h = s.oh = h, s.w = s.ow = w;
        const double m[9] = {1, 0, double(dx), 0, 1, double(dy), 0, 0, 1};
        std::copy(m, m + 9, s.m);
        for (int c = 0; c < 3; ++c) s.fill[c] = float(c + 1);
        warp_perspective_cpu<T>(s, C, interp, mode);
        for (int64_t y = 0; y < h; ++y)
          for (int64_t x = 0; x < w; ++x)
            for (int64_t c = 0; c < C; ++c) {
              const int64_t sx = ref_border(x + dx, w, mode), sy = ref_border(y + dy, h, mode);
              const T want = sx < 0 || sy < 0 ? T(c + 1) : img[size_t((sy * w + sx) * C + c)];
              ASSERT_EQ(out[size_t((y * w + x) * C + c)], want)
                  << int(mode) << " interp " << int(interp) << " shift " << dx << "," << dy;
            }
      }
}

TEST(WarpPerspectiveCpu, IntegerShiftsFollowTheBorderRule) {
  check_shifts<uint8_t>();
  check_shifts<int16_t>();
}

// Bilinear against a tent-weighted reference: the float path within float rounding; the
// fixed-point path within the 1/32-pixel quantisation of the point (OpenCV's).
TEST(WarpPerspectiveCpu, LinearMatchesTentWeights) {
  std::mt19937 rng(5);
  const int64_t h = 13, w = 17;
  std::vector<float> img(size_t(h * w)), out(img.size());
  std::vector<int16_t> img16(img.size()), out16(img.size());
  for (size_t k = 0; k < img.size(); ++k) img16[k] = int16_t(img[k] = float(rng() % 256));
  PerspectiveSample s;
  s.h = s.oh = h, s.w = s.ow = w;
  const double m[9] = {0.93, 0.07, 1.3, -0.05, 1.04, 0.6, 0.002, -0.001, 1};
  std::copy(m, m + 9, s.m);
  s.in = img.data(), s.out = out.data();
  warp_perspective_cpu<float>(s, 1, PerspectiveInterp::kLinear, WarpBorder::kReplicate);
  s.in = img16.data(), s.out = out16.data();
  warp_perspective_cpu<int16_t>(s, 1, PerspectiveInterp::kLinear, WarpBorder::kReplicate);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const double W = m[6] * x + m[7] * y + m[8];
      const double sx = (m[0] * x + m[1] * y + m[2]) / W, sy = (m[3] * x + m[4] * y + m[5]) / W;
      double v = 0;
      for (int64_t ty = int64_t(std::floor(sy)); ty <= int64_t(std::floor(sy)) + 1; ++ty)
        for (int64_t tx = int64_t(std::floor(sx)); tx <= int64_t(std::floor(sx)) + 1; ++tx) {
          const double wt = std::max(0.0, 1 - std::fabs(sx - double(tx))) *
                            std::max(0.0, 1 - std::fabs(sy - double(ty)));
          v += wt * img[size_t(ref_border(ty, h, WarpBorder::kReplicate) * w +
                               ref_border(tx, w, WarpBorder::kReplicate))];
        }
      ASSERT_NEAR(out[size_t(y * w + x)], v, 1e-2) << x << "," << y;
      // 1/32 of a pixel times the steepest step of 255, plus rounding
      ASSERT_NEAR(out16[size_t(y * w + x)], v, 255.0 / 32 + 1) << x << "," << y;
    }
}

// Keys' cubic kernel (A = -0.75) at a distance t, in double.
double keys(double t) {
  const double A = -0.75, a = std::fabs(t);
  if (a <= 1) return ((A + 2) * a - (A + 3)) * a * a + 1;
  if (a < 2) return ((A * a - 5 * A) * a + 8 * A) * a - 4 * A;
  return 0;
}

// Cubic against the kernel evaluated in double over the 4x4 taps: float rounding only (the
// source point is taken in float, as OpenCV's: a few 1e-3 of a level over 0..255).
TEST(WarpPerspectiveCpu, CubicMatchesKeysKernel) {
  std::mt19937 rng(7);
  const int64_t h = 13, w = 17;
  std::vector<float> img(size_t(h * w)), out(img.size());
  std::vector<uint8_t> img8(img.size()), out8(img.size());
  for (size_t k = 0; k < img.size(); ++k) img8[k] = uint8_t(img[k] = float(rng() % 256));
  PerspectiveSample s;
  s.h = s.oh = h, s.w = s.ow = w;
  const double m[9] = {0.93, 0.07, 1.3, -0.05, 1.04, 0.6, 0.002, -0.001, 1};
  std::copy(m, m + 9, s.m);
  s.fill[0] = 40;
  s.in = img.data(), s.out = out.data();
  warp_perspective_cpu<float>(s, 1, PerspectiveInterp::kCubic, WarpBorder::kConstant);
  s.in = img8.data(), s.out = out8.data();
  warp_perspective_cpu<uint8_t>(s, 1, PerspectiveInterp::kCubic, WarpBorder::kConstant);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const double W = m[6] * x + m[7] * y + m[8];
      const double sx = (m[0] * x + m[1] * y + m[2]) / W, sy = (m[3] * x + m[4] * y + m[5]) / W;
      double v = 0;
      const int64_t fx = int64_t(std::floor(sx)), fy = int64_t(std::floor(sy));
      for (int64_t ty = fy - 1; ty <= fy + 2; ++ty)
        for (int64_t tx = fx - 1; tx <= fx + 2; ++tx) {
          const bool inside = tx >= 0 && ty >= 0 && tx < w && ty < h;
          v += keys(sx - double(tx)) * keys(sy - double(ty)) *
               (inside ? img[size_t(ty * w + tx)] : 40.0);
        }
      ASSERT_NEAR(out[size_t(y * w + x)], v, 5e-3) << x << "," << y;
      ASSERT_NEAR(out8[size_t(y * w + x)], std::clamp(v, 0.0, 255.0), 0.5 + 5e-3) << x << "," << y;
    }
}

}  // namespace
}  // namespace stoker::kernels
