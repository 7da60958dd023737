// Remap (DALI's experimental.remap, which calls NPP's nppiRemap): output pixel (x, y) samples the
// input at (mapx(x, y) + shift, mapy(x, y) + shift). The per-pixel work is shared by the CPU kernel
// and its GPU twin, every float product and sum rounded once (float_rn.hpp), so that both give
// the same values bit for bit.
//
// The rules are NPP's documented ones (its remap API and its interpolation modes are IPP's):
// - a point is sampled only when 0 <= x < width and 0 <= y < height; NPP leaves other output
//   pixels unwritten, for which DALI documents a constant border of 0: they are 0 here;
// - nearest takes the pixel at (round(x), round(y)), halves rounded up (x >= 0 here);
// - linear weighs the 2x2 pixels from (int(x), int(y)) by the fraction, rows first;
// - cubic is IPP's: the cubic polynomial through the 4 pixels int(x) - 1 ... int(x) + 2 of each
//   of 4 rows, evaluated at x, then the one through those 4 values, evaluated at y (Lagrange
//   weights);
// taps past the last row or column take the edge pixel. Integer types round the result to
// nearest (halves away from zero) and saturate.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

enum class RemapInterp : int32_t { kNearest, kLinear, kCubic };

// One HWC image of a remap batch; the maps are h x w floats, the output h x w x c.
struct RemapSample {
  const void* in = nullptr;
  void* out = nullptr;
  const float* mapx = nullptr;
  const float* mapy = nullptr;
  int64_t h = 0, w = 0, c = 0;
};

STOKER_HOST_DEVICE inline float remap_round(float v) {
#ifdef __CUDA_ARCH__
  return roundf(v);
#else
  return std::round(v);
#endif
}

// The interpolated value as T: rounded to nearest (halves away from zero) and saturated for
// integer types, as it is for float.
template <typename T>
STOKER_HOST_DEVICE inline T remap_store(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    static_assert(std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t> ||
                  std::is_same_v<T, int16_t>);
    // (Literal bounds: numeric_limits is host-only in device code.)
    constexpr float lo = std::is_signed_v<T> ? -32768.f : 0.f;
    constexpr float hi = std::is_signed_v<T> ? 32767.f : sizeof(T) == 1 ? 255.f : 65535.f;
    const float r = remap_round(v);
    return T(r < lo ? lo : r > hi ? hi : r);
  }
}

// The weights of the 4 taps int(p) - 1 ... int(p) + 2 for fraction t: the Lagrange basis of the
// cubic through them.
STOKER_HOST_DEVICE inline void remap_cubic_weights(float t, float* w) {
  const float a = add_rn(t, 1.f), c = add_rn(t, -1.f), d = add_rn(t, -2.f);
  constexpr float kSixth = 1.f / 6.f;
  w[0] = mul_rn(mul_rn(mul_rn(t, c), d), -kSixth);
  w[1] = mul_rn(mul_rn(mul_rn(a, c), d), 0.5f);
  w[2] = mul_rn(mul_rn(mul_rn(a, t), d), -0.5f);
  w[3] = mul_rn(mul_rn(mul_rn(a, t), c), kSixth);
}

STOKER_HOST_DEVICE inline int64_t remap_clamp(int64_t p, int64_t len) {
  return p < 0 ? 0 : p >= len ? len - 1 : p;
}

// Output pixel (x, y) of sample s: `shift` is added to both map values (-0.5 for DALI's
// pixel_origin 'corner', 0 for 'center').
template <typename T, RemapInterp kInterp>
STOKER_HOST_DEVICE inline void remap_pixel(const RemapSample& s, float shift, int64_t x,
                                           int64_t y) {
  const T* in = static_cast<const T*>(s.in);
  const int64_t C = s.c, k = y * s.w + x;
  T* o = static_cast<T*>(s.out) + k * C;
  const float px = add_rn(s.mapx[k], shift), py = add_rn(s.mapy[k], shift);
  // NaN fails both comparisons: not sampled.
  if (!(px >= 0.f && double(px) < double(s.w) && py >= 0.f && double(py) < double(s.h))) {
    for (int64_t c = 0; c < C; ++c) o[c] = T(0);
    return;
  }
  if constexpr (kInterp == RemapInterp::kNearest) {
    const int64_t ix = remap_clamp(int64_t(remap_round(px)), s.w);
    const int64_t iy = remap_clamp(int64_t(remap_round(py)), s.h);
    const T* p = in + (iy * s.w + ix) * C;
    for (int64_t c = 0; c < C; ++c) o[c] = p[c];
  } else if constexpr (kInterp == RemapInterp::kLinear) {
    const int64_t x0 = int64_t(px), y0 = int64_t(py);
    const float fx = add_rn(px, -float(x0)), fy = add_rn(py, -float(y0));
    const float gx = add_rn(1.f, -fx), gy = add_rn(1.f, -fy);
    const int64_t x1 = remap_clamp(x0 + 1, s.w), y1 = remap_clamp(y0 + 1, s.h);
    const T* r0 = in + y0 * s.w * C;
    const T* r1 = in + y1 * s.w * C;
    for (int64_t c = 0; c < C; ++c) {
      const float top =
          add_rn(mul_rn(float(r0[x0 * C + c]), gx), mul_rn(float(r0[x1 * C + c]), fx));
      const float bottom =
          add_rn(mul_rn(float(r1[x0 * C + c]), gx), mul_rn(float(r1[x1 * C + c]), fx));
      o[c] = remap_store<T>(add_rn(mul_rn(top, gy), mul_rn(bottom, fy)));
    }
  } else {
    const int64_t x0 = int64_t(px), y0 = int64_t(py);
    float wx[4], wy[4];
    remap_cubic_weights(add_rn(px, -float(x0)), wx);
    remap_cubic_weights(add_rn(py, -float(y0)), wy);
    int64_t cols[4], rows[4];
    for (int j = 0; j < 4; ++j) {
      cols[j] = remap_clamp(x0 - 1 + j, s.w) * C;
      rows[j] = remap_clamp(y0 - 1 + j, s.h) * s.w * C;
    }
    for (int64_t c = 0; c < C; ++c) {
      float sum = 0.f;
      for (int i = 0; i < 4; ++i) {
        float row = 0.f;
        for (int j = 0; j < 4; ++j)
          row = add_rn(row, mul_rn(float(in[rows[i] + cols[j] + c]), wx[j]));
        sum = add_rn(sum, mul_rn(row, wy[i]));
      }
      o[c] = remap_store<T>(sum);
    }
  }
}

}  // namespace stoker::kernels
