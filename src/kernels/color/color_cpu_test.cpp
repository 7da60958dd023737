#include "stoker/kernels/color/color_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// Double-precision references, written from the definitions.
double yiq_ref(const double rgb[3], double hue, double sat, double val, int channel) {
  const double y = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
  const double i = 0.596 * rgb[0] - 0.274 * rgb[1] - 0.322 * rgb[2];
  const double q = 0.211 * rgb[0] - 0.523 * rgb[1] + 0.312 * rgb[2];
  const double h = hue * M_PI / 180;
  // DALI's direction (the parity suite compares hue with DALI 2.4 itself).
  const double i2 = (i * std::cos(h) + q * std::sin(h)) * sat * val;
  const double q2 = (q * std::cos(h) - i * std::sin(h)) * sat * val;
  const double y2 = y * val;
  // Solve the forward matrix for RGB (Cramer's rule, independent of the kernel's inverse).
  const double a[3][3] = {{0.299, 0.587, 0.114}, {0.596, -0.274, -0.322}, {0.211, -0.523, 0.312}};
  const double rhs[3] = {y2, i2, q2};
  auto det = [](const double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  double m[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m[r][c] = c == channel ? rhs[r] : a[r][c];
  return det(m) / det(a);
}

uint8_t sat_u8(double v) { return uint8_t(std::clamp(std::round(v), 0.0, 255.0)); }

TEST(ColorCpu, HsvMatrixMatchesTheYiqDefinition) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> hue(-400, 400), s(0, 2.5), v(0, 2);
  for (int t = 0; t < 50; ++t) {
    const double h = hue(rng), sa = s(rng), va = v(rng);
    std::vector<uint8_t> in(3 * 64);
    for (auto& x : in) x = uint8_t(rng());
    std::vector<uint8_t> out(in.size());
    color_matrix_cpu(in.data(), 64, hsv_matrix(h, sa, va), {0, 0, 0}, out.data());
    std::vector<float> outf(in.size());
    color_matrix_cpu(in.data(), 64, hsv_matrix(h, sa, va), {0, 0, 0}, outf.data());
    for (int p = 0; p < 64; ++p) {
      const double rgb[3] = {double(in[3 * p]), double(in[3 * p + 1]), double(in[3 * p + 2])};
      for (int c = 0; c < 3; ++c) {
        const double ref = yiq_ref(rgb, h, sa, va, c);
        EXPECT_NEAR(outf[size_t(3 * p + c)], ref, 1e-3 * (1 + std::abs(ref)));
        // uint8: rounded and saturated; float rounding may flip an exact .5 tie.
        EXPECT_LE(std::abs(int(out[size_t(3 * p + c)]) - int(sat_u8(ref))), 1);
      }
    }
  }
  // Identity at hue 0, saturation 1, value 1; gray stays gray for any hue and saturation.
  std::vector<uint8_t> in = {0, 0, 0, 255, 255, 255, 10, 200, 77, 128, 128, 128}, out(12);
  color_matrix_cpu(in.data(), 4, hsv_matrix(0, 1, 1), {0, 0, 0}, out.data());
  EXPECT_EQ(out, in);
  color_matrix_cpu(in.data(), 4, hsv_matrix(123, 0.3, 1), {0, 0, 0}, out.data());
  EXPECT_EQ(out[9], 128);
  EXPECT_EQ(out[10], 128);
  EXPECT_EQ(out[11], 128);
}

TEST(ColorCpu, AffineRoundsAndSaturates) {
  std::vector<uint8_t> in = {0, 1, 100, 200, 255};
  std::vector<uint8_t> out(5);
  affine_cpu(in.data(), 5, 1.5f, -10.f, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 140, 255, 255}));
  std::vector<int8_t> outs(5);
  affine_cpu(in.data(), 5, 1.0f, -128.5f, outs.data());  // -128.5 rounds away from zero
  EXPECT_EQ(outs, (std::vector<int8_t>{-128, -128, -29, 72, 127}));
  std::vector<float> empty_out;
  affine_cpu(in.data(), 0, 2.f, 0.f, empty_out.data());  // an empty sample is fine
}

TEST(ColorCpu, ColorSpaceAgainstTheFormula) {
  // BT.601 RGB -> YCbCr (studio range) written out: Y = 16 + (65.481 R + 128.553 G + 24.966 B)
  // / 255 and so on, against the kernel given that matrix and offset.
  const Mat3 m{{{65.481 / 255, 128.553 / 255, 24.966 / 255},
                {-37.797 / 255, -74.203 / 255, 112.0 / 255},
                {112.0 / 255, -93.786 / 255, -18.214 / 255}}};
  const std::array<double, 3> offset{16, 128, 128};
  std::vector<uint8_t> rgb = {0, 0, 0, 255, 255, 255, 255, 0, 0, 10, 200, 77};
  std::vector<uint8_t> out(12), gray_out(4);
  color_space_cpu(rgb.data(), 4, 3, 3, m, offset, 1.0, out.data());
  for (int p = 0; p < 4; ++p)
    for (int r = 0; r < 3; ++r) {
      double v = offset[size_t(r)];
      for (int k = 0; k < 3; ++k) v += m[size_t(r)][size_t(k)] * rgb[size_t(3 * p + k)];
      EXPECT_EQ(out[size_t(3 * p + r)], uint8_t(std::lround(std::clamp(v, 0.0, 255.0))))
          << "pixel " << p << " channel " << r;
    }
  EXPECT_EQ(out[0], 16);   // black
  EXPECT_EQ(out[3], 235);  // white
  // One output channel: the first row (luma); a gray input reads its one channel three times.
  color_space_cpu(rgb.data(), 4, 3, 1, m, offset, 1.0, gray_out.data());
  for (int p = 0; p < 4; ++p) EXPECT_EQ(gray_out[size_t(p)], out[size_t(3 * p)]);
  const std::vector<uint8_t> gray = {0, 255, 128};
  std::vector<uint8_t> from_gray(9), from_rgb(9);
  const std::vector<uint8_t> gray_rgb = {0, 0, 0, 255, 255, 255, 128, 128, 128};
  color_space_cpu(gray.data(), 3, 1, 3, m, offset, 1.0, from_gray.data());
  color_space_cpu(gray_rgb.data(), 3, 3, 3, m, offset, 1.0, from_rgb.data());
  EXPECT_EQ(from_gray, from_rgb);
  // Floats in [0, 1] with scale 255: the same map on the 0-255 scale, divided back.
  const std::vector<float> f = {10 / 255.f, 200 / 255.f, 77 / 255.f};
  std::vector<float> fout(3);
  color_space_cpu(f.data(), 1, 3, 3, m, offset, 255.0, fout.data());
  for (int r = 0; r < 3; ++r) {
    double v = offset[size_t(r)];
    for (int k = 0; k < 3; ++k) v += m[size_t(r)][size_t(k)] * double(f[size_t(k)]) * 255;
    EXPECT_NEAR(fout[size_t(r)], v / 255, 1e-6);
  }
}

}  // namespace
}  // namespace stoker::kernels
