// Perspective warps with OpenCV's warpPerspective arithmetic (DALI's CPU backend calls it): the
// per-pixel work shared by the CPU kernel and its GPU twin, so that both give the same values bit
// for bit. Conventions (OpenCV's): pixel centres at integers; output pixel (x, y) reads the input
// at (X, Y) / W with (X, Y, W) = M (x, y, 1), M mapping output to input, in double. Nearest
// rounds the point (half to even); linear quantises it to 1/32 pixel and interpolates with
// OpenCV's tabulated weights (fixed point of 15 bits for uint8, float otherwise); cubic takes
// the point in float and weighs 4x4 pixels with OpenCV's cubic kernel (A = -0.75) of its
// fraction, in float for every type. Taps outside the image follow the border mode (OpenCV's
// borderInterpolate).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

enum class WarpBorder : int32_t { kConstant, kReplicate, kReflect, kReflect101, kWrap };
enum class PerspectiveInterp : int32_t { kNearest, kLinear, kCubic };
constexpr int kPerspectiveMaxChannels = 4;

// One HWC image (C <= 4) of a perspective batch.
struct PerspectiveSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t h = 0, w = 0, oh = 0, ow = 0;
  double m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};  // output pixel -> input point (OpenCV's centres)
  float fill[kPerspectiveMaxChannels] = {};   // the constant border, as the type holds it
};

// OpenCV's borderInterpolate: the input index that stands for p (0 <= p < len gives p), or -1
// (constant border: the fill value).
STOKER_HOST_DEVICE inline int64_t border_index(int64_t p, int64_t len, WarpBorder mode) {
  if (p >= 0 && p < len) return p;
  switch (mode) {
    case WarpBorder::kConstant:
      return -1;
    case WarpBorder::kReplicate:
      return p < 0 ? 0 : len - 1;
    case WarpBorder::kReflect:
    case WarpBorder::kReflect101: {
      const int64_t delta = mode == WarpBorder::kReflect101;
      if (len == 1) return 0;
      // One period of the mirrored image is 2 len - 2 delta long: fold p into it first (OpenCV
      // loops, one reflection at a time, to the same index).
      const int64_t period = 2 * len - 2 * delta;
      p = p % period;
      if (p < 0) p += period;
      while (p < 0 || p >= len) p = p < 0 ? -p - 1 + delta : len - 1 - (p - len) - delta;
      return p;
    }
    case WarpBorder::kWrap: {
      p %= len;
      return p < 0 ? p + len : p;
    }
  }
  return -1;
}

// OpenCV's saturate_cast<int>(double) after clamping to int's range: rounds half to even.
STOKER_HOST_DEVICE inline int64_t round_even(double v) {
#ifdef __CUDA_ARCH__
  return int64_t(rint(v));
#else
  return int64_t(std::nearbyint(v));
#endif
}

STOKER_HOST_DEVICE inline int64_t clamp_short(int64_t v) {
  return v < -32768 ? -32768 : v > 32767 ? 32767 : v;
}

// OpenCV's block decomposition of the output (warpPerspective's invoker, BLOCK_SZ 32): the map
// of pixel (x, y) is evaluated as (M0 xb + M1 y + M2) + M0 (x - xb), xb the start of its block
// of bw0 columns, so the double values (and so the rounding at ties) are OpenCV's.
STOKER_HOST_DEVICE inline int64_t perspective_block_width(int64_t oh, int64_t ow) {
  const int64_t bh0 = oh < 16 ? oh : 16;
  const int64_t bw = bh0 > 0 ? 1024 / bh0 : 1;
  return bw < ow ? bw : ow;
}

// The source point of output pixel (x, y), scaled by `scale` (1 for nearest, 32 for linear) and
// rounded: OpenCV's integer map.
STOKER_HOST_DEVICE inline void perspective_point(const double* m, int64_t x, int64_t y, int64_t bw0,
                                                 double scale, int64_t& X, int64_t& Y) {
  const int64_t xb = bw0 > 0 ? x / bw0 * bw0 : 0;
  const double x1 = double(x - xb), fxb = double(xb), fy = double(y);
  const double X0 = add_rn(add_rn(mul_rn(m[0], fxb), mul_rn(m[1], fy)), m[2]);
  const double Y0 = add_rn(add_rn(mul_rn(m[3], fxb), mul_rn(m[4], fy)), m[5]);
  const double W0 = add_rn(add_rn(mul_rn(m[6], fxb), mul_rn(m[7], fy)), m[8]);
  double W = add_rn(W0, mul_rn(m[6], x1));
#ifdef __CUDA_ARCH__
  W = W != 0 ? __ddiv_rn(scale, W) : 0;
#else
  W = W != 0 ? scale / W : 0;
#endif
  auto clamp_int = [](double v) {
    return v < -2147483648.0 ? -2147483648.0 : v > 2147483647.0 ? 2147483647.0 : v;
  };
  const double fX = clamp_int(mul_rn(add_rn(X0, mul_rn(m[0], x1)), W));
  const double fY = clamp_int(mul_rn(add_rn(Y0, mul_rn(m[3], x1)), W));
  // NaN (W infinite...) clamps to nothing in OpenCV's max/min: it becomes INT_MIN there.
  X = fX == fX ? round_even(fX) : -2147483648LL;
  Y = fY == fY ? round_even(fY) : -2147483648LL;
}

// OpenCV 4.11's float path (warpPerspective*Invoker_8UC1 ... 32FC4, which DALI's OpenCV takes
// for uint8, uint16 and float32 with 1, 3 or 4 channels): the source point in float, M taken as
// floats. DALI's build evaluates it with fused multiply-adds, (x M0 + (y M1 + M2)) / (x M6 +
// (y M7 + M8)) with the x terms fused, which gives DALI's nearest-neighbour picks exactly.
STOKER_HOST_DEVICE inline float fma_f(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

STOKER_HOST_DEVICE inline void perspective_point_f(const float* m, int64_t x, int64_t y, float& sx,
                                                   float& sy) {
  const float fx = float(x), fy = float(y);
  const float w = fma_f(fx, m[6], add_rn(mul_rn(fy, m[7]), m[8]));
  const float X = fma_f(fx, m[0], add_rn(mul_rn(fy, m[1]), m[2]));
  const float Y = fma_f(fx, m[3], add_rn(mul_rn(fy, m[4]), m[5]));
#ifdef __CUDA_ARCH__
  sx = __fdiv_rn(X, w), sy = __fdiv_rn(Y, w);
#else
  sx = X / w, sy = Y / w;
#endif
}

// cvFloor / cvRound of a float, INT_MIN where the int conversion is undefined (x86's answer).
STOKER_HOST_DEVICE inline int64_t floor_int_f(float v) {
  if (!(v >= -2147483648.f && v < 2147483648.f)) return -2147483648LL;
#ifdef __CUDA_ARCH__
  return int64_t(floorf(v));
#else
  return int64_t(std::floor(v));
#endif
}
STOKER_HOST_DEVICE inline int64_t round_int_f(float v) {
  if (!(v >= -2147483648.f && v < 2147483648.f)) return -2147483648LL;
#ifdef __CUDA_ARCH__
  return int64_t(rintf(v));
#else
  return int64_t(std::nearbyint(v));
#endif
}

template <typename T, bool kLinear, typename Store>
STOKER_HOST_DEVICE inline void perspective_pixel_f(const PerspectiveSample& s, int64_t C,
                                                   WarpBorder border, int64_t x, int64_t y, T* o,
                                                   Store store) {
  const T* in = static_cast<const T*>(s.in);
  float m[9];
  for (int k = 0; k < 9; ++k) m[k] = float(s.m[k]);
  float sx, sy;
  perspective_point_f(m, x, y, sx, sy);
  auto tap = [&](int64_t tx, int64_t ty, int64_t c) -> float {
    if (tx >= 0 && ty >= 0 && tx < s.w && ty < s.h) return float(in[(ty * s.w + tx) * C + c]);
    tx = border_index(tx, s.w, border), ty = border_index(ty, s.h, border);
    return tx >= 0 && ty >= 0 ? float(in[(ty * s.w + tx) * C + c]) : s.fill[c];
  };
  if constexpr (!kLinear) {
    const int64_t ix = round_int_f(sx), iy = round_int_f(sy);
    if (border == WarpBorder::kConstant && !(ix >= 0 && iy >= 0 && ix < s.w && iy < s.h)) {
      for (int64_t c = 0; c < C; ++c) o[c] = T(s.fill[c]);
      return;
    }
    for (int64_t c = 0; c < C; ++c) o[c] = T(tap(ix, iy, c));
  } else {
    const int64_t ix = floor_int_f(sx), iy = floor_int_f(sy);
    const float fx = add_rn(sx, -float(ix)), fy = add_rn(sy, -float(iy));
    if (border == WarpBorder::kConstant &&
        (ix + 1 < 0 || ix + 1 > s.w || iy + 1 < 0 || iy + 1 > s.h)) {
      for (int64_t c = 0; c < C; ++c) o[c] = T(s.fill[c]);
      return;
    }
    for (int64_t c = 0; c < C; ++c) {
      const float p00 = tap(ix, iy, c), p01 = tap(ix + 1, iy, c);
      const float p10 = tap(ix, iy + 1, c), p11 = tap(ix + 1, iy + 1, c);
      const float v0 = fma_f(fx, add_rn(p01, -p00), p00);
      const float v1 = fma_f(fx, add_rn(p11, -p10), p10);
      o[c] = store(fma_f(fy, add_rn(v1, -v0), v0));
    }
  }
}

// OpenCV's interpolateCubic: the weights of the four taps around a point at fraction x.
STOKER_HOST_DEVICE inline void cubic_weights(float x, float* w) {
  const float A = -0.75f, x1 = add_rn(x, 1.f), ix = add_rn(1.f, -x);
  w[0] =
      add_rn(mul_rn(add_rn(mul_rn(add_rn(mul_rn(A, x1), -mul_rn(5.f, A)), x1), mul_rn(8.f, A)), x1),
             -mul_rn(4.f, A));
  w[1] = add_rn(mul_rn(mul_rn(add_rn(mul_rn(add_rn(A, 2.f), x), -add_rn(A, 3.f)), x), x), 1.f);
  w[2] = add_rn(mul_rn(mul_rn(add_rn(mul_rn(add_rn(A, 2.f), ix), -add_rn(A, 3.f)), ix), ix), 1.f);
  w[3] = add_rn(add_rn(add_rn(1.f, -w[0]), -w[1]), -w[2]);
}

// Cubic (OpenCV 4.11's float path, which DALI's CPU backend takes for every type and channel
// count): each of the four rows weighed across, then the rows weighed down, in float.
template <typename T, typename Store>
STOKER_HOST_DEVICE inline void perspective_pixel_cubic(const PerspectiveSample& s, int64_t C,
                                                       WarpBorder border, int64_t x, int64_t y,
                                                       T* o, Store store) {
  const T* in = static_cast<const T*>(s.in);
  float m[9];
  for (int k = 0; k < 9; ++k) m[k] = float(s.m[k]);
  float sx, sy;
  perspective_point_f(m, x, y, sx, sy);
  const int64_t ix = floor_int_f(sx), iy = floor_int_f(sy);
  float wx[4], wy[4];
  cubic_weights(add_rn(sx, -float(ix)), wx);
  cubic_weights(add_rn(sy, -float(iy)), wy);
  int64_t cols[4], rows[4];
  for (int k = 0; k < 4; ++k)
    cols[k] = border_index(ix - 1 + k, s.w, border),
    rows[k] = border_index(iy - 1 + k, s.h, border);
  for (int64_t c = 0; c < C; ++c) {
    float sum = 0;
    for (int i = 0; i < 4; ++i) {
      float row = 0;
      for (int j = 0; j < 4; ++j) {
        const float v =
            rows[i] >= 0 && cols[j] >= 0 ? float(in[(rows[i] * s.w + cols[j]) * C + c]) : s.fill[c];
        row = add_rn(row, mul_rn(v, wx[j]));
      }
      sum = add_rn(sum, mul_rn(row, wy[i]));
    }
    o[c] = store(sum);
  }
}

// Whether DALI's OpenCV takes the float path for this type and channel count.
template <typename T>
STOKER_HOST_DEVICE inline bool perspective_float_path(int64_t C) {
  return !std::is_same_v<T, int16_t> && (C == 1 || C == 3 || C == 4);
}

// Output pixel (x, y) of T, C channels. Acc: int for uint8 (15-bit fixed-point weights), float
// for the other types. `store` converts an accumulated float (non-uint8 linear) to T.
template <typename T, bool kLinear, typename Store>
STOKER_HOST_DEVICE inline void perspective_pixel(const PerspectiveSample& s, int64_t C,
                                                 WarpBorder border, int64_t bw0, int64_t x,
                                                 int64_t y, T* o, Store store) {
  const T* in = static_cast<const T*>(s.in);
  int64_t X, Y;
  if constexpr (!kLinear) {
    perspective_point(s.m, x, y, bw0, 1.0, X, Y);
    int64_t sx = clamp_short(X), sy = clamp_short(Y);
    if (!(sx >= 0 && sy >= 0 && sx < s.w && sy < s.h)) {
      sx = border_index(sx, s.w, border), sy = border_index(sy, s.h, border);
      if (sx < 0 || sy < 0) {
        for (int64_t c = 0; c < C; ++c) o[c] = T(s.fill[c]);
        return;
      }
    }
    for (int64_t c = 0; c < C; ++c) o[c] = in[(sy * s.w + sx) * C + c];
  } else {
    perspective_point(s.m, x, y, bw0, 32.0, X, Y);
    const int64_t sx = clamp_short(X >> 5), sy = clamp_short(Y >> 5);
    const int64_t ax = X & 31, ay = Y & 31;
    if (border == WarpBorder::kConstant && (sx >= s.w || sx + 1 < 0 || sy >= s.h || sy + 1 < 0)) {
      for (int64_t c = 0; c < C; ++c) o[c] = T(s.fill[c]);
      return;
    }
    const int64_t x0 = border_index(sx, s.w, border), x1 = border_index(sx + 1, s.w, border);
    const int64_t y0 = border_index(sy, s.h, border), y1 = border_index(sy + 1, s.h, border);
    auto tap = [&](int64_t tx, int64_t ty, int64_t c) -> float {
      return tx >= 0 && ty >= 0 ? float(in[(ty * s.w + tx) * C + c]) : s.fill[c];
    };
    if constexpr (std::is_same_v<T, uint8_t>) {
      // OpenCV's BilinearTab_i: (32 - a) a products times 32, summing to 2^15 exactly.
      const int32_t w0 = int32_t(32 * (32 - ay) * (32 - ax)), w1 = int32_t(32 * (32 - ay) * ax);
      const int32_t w2 = int32_t(32 * ay * (32 - ax)), w3 = int32_t(32 * ay * ax);
      for (int64_t c = 0; c < C; ++c) {
        const int32_t v = int32_t(tap(x0, y0, c)) * w0 + int32_t(tap(x1, y0, c)) * w1 +
                          int32_t(tap(x0, y1, c)) * w2 + int32_t(tap(x1, y1, c)) * w3;
        const int32_t r = (v + (1 << 14)) >> 15;
        o[c] = T(r < 0 ? 0 : r > 255 ? 255 : r);
      }
    } else {
      // BilinearTab_f: the products of the 1/32 steps (exact in float).
      const float fx = float(ax) / 32, fy = float(ay) / 32;
      const float w0 = (1 - fy) * (1 - fx), w1 = (1 - fy) * fx, w2 = fy * (1 - fx), w3 = fy * fx;
      for (int64_t c = 0; c < C; ++c) {
        const float v =
            add_rn(add_rn(add_rn(mul_rn(tap(x0, y0, c), w0), mul_rn(tap(x1, y0, c), w1)),
                          mul_rn(tap(x0, y1, c), w2)),
                   mul_rn(tap(x1, y1, c), w3));
        o[c] = store(v);
      }
    }
  }
}

}  // namespace stoker::kernels
