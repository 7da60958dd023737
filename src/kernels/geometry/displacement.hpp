// Displacement resampling (DALI's water and sphere) and grid masks: the per-pixel arithmetic,
// shared by the CPU kernels and their GPU twins so that both backends give the same values bit
// for bit (float products and sums rounded one at a time, as DALI's CPU build computes them).
//
// Coordinates have their origin at the top-left corner of the top-left pixel (DALI's sampler):
// nearest takes pixel (floor(x), floor(y)); linear interpolates between the four pixels around
// (x - 0.5, y - 0.5). Taps outside the image take the fill value.
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

enum class DisplaceMap : int32_t { kWater = 0, kSphere = 1 };

// One HWC image of a displacement batch.
struct DisplaceSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t h = 0, w = 0;
  float fill = 0;             // the fill value as the input type holds it
  int32_t apply = 1;          // 0: the output is a copy of the input (DALI's `mask`)
  const float* dx = nullptr;  // water: x offset of each row (h values), water_offsets
  const float* dy = nullptr;  // water: y offset of each column (w values)
};

// Water's offsets: out[i] = ampl * sin(freq * i + phase) (cos with `cosine`) for i < n. The x
// offset depends on the row only (a sine), the y offset on the column only (a cosine), so they
// are computed once per row and column on the host (libm's sinf and cosf, as DALI's CPU
// backend) and the GPU uses the very same values.
inline void water_offsets(float ampl, float freq, float phase, bool cosine, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float arg = freq * float(i) + phase;
    out[i] = ampl * (cosine ? std::cos(arg) : std::sin(arg));
  }
}

// Sphere's source point of output pixel (x, y) of an h x w image: the distance from the centre
// scaled by itself over d = (int) max(w, h) / 2 (DALI's truncation). A 1 x 1 image has d = 0:
// DALI divides 0 by 0 there, so the point is NaN (see sample_point_ok).
STOKER_HOST_DEVICE inline void sphere_point(int64_t x, int64_t y, int64_t h, int64_t w, float& sx,
                                            float& sy) {
  const float mid_x = mul_rn(float(w), 0.5f), mid_y = mul_rn(float(h), 0.5f);
  const int d = int(mid_x > mid_y ? mid_x : mid_y);
  if (d == 0) {
#ifdef __CUDA_ARCH__
    sx = sy = nanf("");
#else
    sx = sy = std::nanf("");
#endif
    return;
  }
  const float ty = add_rn(add_rn(float(y), 0.5f), -mid_y);
  const float tx = add_rn(add_rn(float(x), 0.5f), -mid_x);
  const float r2 = add_rn(mul_rn(tx, tx), mul_rn(ty, ty));
#ifdef __CUDA_ARCH__
  const float rad = __fdiv_rn(__fsqrt_rn(r2), float(d));
#else
  const float rad = std::sqrt(r2) / float(d);
#endif
  sx = add_rn(mid_x, mul_rn(rad, tx));
  sy = add_rn(mid_y, mul_rn(rad, ty));
}

// Whether a source coordinate can be sampled: within +-2^30. Farther points are outside every
// image (the pixel takes the fill value; DALI's int conversion is undefined there). A NaN point
// takes the fill with nearest and is NaN with linear (0 in integer types), as in DALI.
STOKER_HOST_DEVICE inline bool sample_point_ok(float v) {
  return v >= -1073741824.f && v <= 1073741824.f;
}
STOKER_HOST_DEVICE inline bool is_nan(float v) { return !(v == v); }

STOKER_HOST_DEVICE inline int64_t floor_i64(float v) {
#ifdef __CUDA_ARCH__
  return int64_t(floorf(v));
#else
  return int64_t(std::floor(v));
#endif
}

// Channel ch of the image at pixel (x, y), or `fill` outside it.
template <typename T>
STOKER_HOST_DEVICE inline float displace_tap(const T* in, int64_t h, int64_t w, int64_t c,
                                             int64_t x, int64_t y, int64_t ch, float fill) {
  if (x < 0 || y < 0 || x >= w || y >= h) return fill;
  return float(in[(y * w + x) * c + ch]);
}

// Bilinear weights of source point (sx, sy): the top-left tap (x0, y0) and the fractions,
// in DALI's order of operations.
struct LinearTaps {
  int64_t x0, y0;
  float qx, px, qy;
};
STOKER_HOST_DEVICE inline LinearTaps linear_taps(float sx, float sy) {
  const float x = add_rn(sx, -0.5f), y = add_rn(sy, -0.5f);
  LinearTaps t;
  t.x0 = floor_i64(x), t.y0 = floor_i64(y);
  t.qx = add_rn(x, -float(t.x0));
  t.px = add_rn(1.f, -t.qx);
  t.qy = add_rn(y, -float(t.y0));
  return t;
}

// s0 = s00 px + s01 qx, s1 likewise, value = s0 + (s1 - s0) qy (DALI's sampler).
STOKER_HOST_DEVICE inline float linear_mix(float s00, float s01, float s10, float s11,
                                           const LinearTaps& t) {
  const float s0 = add_rn(mul_rn(s00, t.px), mul_rn(s01, t.qx));
  const float s1 = add_rn(mul_rn(s10, t.px), mul_rn(s11, t.qx));
  return add_rn(s0, mul_rn(add_rn(s1, -s0), t.qy));
}

// One image of a grid mask: its per-sample constants, prepared on the host by grid_mask_setup.
struct GridMaskSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t h = 0, w = 0;
  float ca = 0, sa = 0, sx = 0, sy = 0, ratio = 0;
};

// DALI's constants: cos and sin of the angle over the tile, the shift over the tile.
inline void grid_mask_setup(GridMaskSample& s, int64_t tile, float ratio, float angle,
                            float shift_x, float shift_y) {
  s.ca = std::cos(angle) / float(tile);
  s.sa = std::sin(angle) / float(tile);
  s.sx = shift_x / float(tile);
  s.sy = shift_y / float(tile);
  s.ratio = ratio;
}

// Whether pixel (x, y) is kept: its position in tile units (rotated, shifted) has a fractional
// part >= ratio on either axis; the rest (the black squares) is zeroed.
STOKER_HOST_DEVICE inline bool grid_mask_keep(const GridMaskSample& s, int64_t x, int64_t y) {
  const float fxy = add_rn(-s.sx, mul_rn(float(y), -s.sa));
  const float fyy = add_rn(-s.sy, mul_rn(float(y), s.ca));
  const float fx = add_rn(fxy, mul_rn(float(x), s.ca));
  const float fy = add_rn(fyy, mul_rn(float(x), s.sa));
#ifdef __CUDA_ARCH__
  return add_rn(fx, -floorf(fx)) >= s.ratio || add_rn(fy, -floorf(fy)) >= s.ratio;
#else
  return fx - std::floor(fx) >= s.ratio || fy - std::floor(fy) >= s.ratio;
#endif
}

}  // namespace stoker::kernels
