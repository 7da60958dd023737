// Colour adjustments as affine maps over pixel values, computed in float and converted to the
// output type (integers: rounded half away from zero, saturated).
//   affine_cpu:       out = in * gain + bias, every element (brightness, contrast).
//   color_matrix_cpu: out = M * in + offset, per 3-channel pixel (hue, saturation, value).
// hsv_matrix() builds DALI's linear approximation of an HSV change: the colour goes to YIQ,
// (I, Q) turn by `hue` degrees (I' = I cos h + Q sin h, Q' = Q cos h - I sin h: DALI's
// direction, checked against DALI 2.4 by the parity suite) and scale by `saturation`, all of
// (Y, I, Q) scales by `value`, and it comes back to RGB.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

using Mat3 = std::array<std::array<double, 3>, 3>;

inline Mat3 mat_mul(const Mat3& a, const Mat3& b) {
  Mat3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) r[i][j] += a[i][k] * b[k][j];
  return r;
}

// NTSC RGB -> YIQ, and its exact inverse (computed, so that hue 0, saturation 1 and value 1
// give the identity).
inline const Mat3& rgb_to_yiq() {
  static const Mat3 m{{{0.299, 0.587, 0.114}, {0.596, -0.274, -0.322}, {0.211, -0.523, 0.312}}};
  return m;
}
inline Mat3 inverse(const Mat3& m) {
  const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  Mat3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int a = (j + 1) % 3, b = (j + 2) % 3, c = (i + 1) % 3, d = (i + 2) % 3;
      r[i][j] = (m[a][c] * m[b][d] - m[a][d] * m[b][c]) / det;
    }
  return r;
}

// ITU-R BT.601 RGB -> YCbCr, studio range, in 8-bit units: Y in [16, 235], Cb and Cr in
// [16, 240] (ycbcr = M rgb + offset). DALI's convention for YCbCr images.
inline const Mat3& rgb_to_ycbcr_bt601() {
  static const Mat3 m{{{65.481 / 255, 128.553 / 255, 24.966 / 255},
                       {-37.797 / 255, -74.203 / 255, 112.0 / 255},
                       {112.0 / 255, -93.786 / 255, -18.214 / 255}}};
  return m;
}
inline constexpr std::array<double, 3> kYCbCrOffset{16, 128, 128};

inline Mat3 hsv_matrix(double hue_degrees, double saturation, double value) {
  const double h = hue_degrees * 3.14159265358979323846 / 180.0;
  const double c = std::cos(h) * saturation * value, s = std::sin(h) * saturation * value;
  const Mat3 adjust{{{value, 0, 0}, {0, c, s}, {0, -s, c}}};
  static const Mat3 back = inverse(rgb_to_yiq());
  return mat_mul(back, mat_mul(adjust, rgb_to_yiq()));
}

template <typename Out, typename In>
void affine_cpu(const In* in, int64_t count, float gain, float bias, Out* out) {
  for (int64_t k = 0; k < count; ++k) out[k] = convert_sat<Out>(float(in[k]) * gain + bias);
}

template <typename Out, typename In>
void color_matrix_cpu(const In* in, int64_t pixels, const Mat3& m,
                      const std::array<double, 3>& offset, Out* out) {
  float f[3][3], o[3];
  for (int i = 0; i < 3; ++i) {
    o[i] = float(offset[size_t(i)]);
    for (int j = 0; j < 3; ++j) f[i][j] = float(m[size_t(i)][size_t(j)]);
  }
  for (int64_t p = 0; p < pixels; ++p, in += 3, out += 3) {
    const float r = float(in[0]), g = float(in[1]), b = float(in[2]);
    for (int i = 0; i < 3; ++i)
      out[i] = convert_sat<Out>(f[i][0] * r + f[i][1] * g + f[i][2] * b + o[i]);
  }
}

// color_space_conversion: per pixel, out = (M * x + offset) / scale with x the pixel's 3
// channels (a gray pixel's one, three times) times `scale` (255 for floats in [0, 1], else 1);
// out_channels 1 (the first row) or 3.
template <typename T>
void color_space_cpu(const T* in, int64_t pixels, int in_channels, int out_channels, const Mat3& m,
                     const std::array<double, 3>& offset, double scale, T* out) {
  for (int64_t p = 0; p < pixels; ++p) {
    double x[3];
    for (int k = 0; k < 3; ++k)
      x[k] = double(in[p * in_channels + (in_channels == 1 ? 0 : k)]) * scale;
    for (int r = 0; r < out_channels; ++r) {
      double v = offset[size_t(r)];
      for (int k = 0; k < 3; ++k) v += m[size_t(r)][size_t(k)] * x[k];
      out[p * out_channels + r] = convert_sat<T>(float(v / scale));
    }
  }
}

}  // namespace stoker::kernels
