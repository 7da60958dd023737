// fn.laplacian's computation, with the arithmetic of DALI 2.4's CPU kernel
// (kernels/imgproc/convolution/laplacian_cpu.h), so that results are DALI's bit for bit:
//   out = sum over the spatial axes i of scale[i] * d_i,
//   d_i = the separable convolution of the sample with, along axis i, a derivative window and,
//         along every other axis j, a smoothing window (window sizes window[i][j]),
// one axis at a time from the innermost to the outermost, each tap accumulated in float32 from 0
// (a product, then a sum: no fused multiply-add) over mirrored borders (reflect-101). The partial
// derivatives are summed in float in axis order (acc = d_0 * s_0; acc = d_i * s_i + acc) and the
// last sum is rounded half away from zero and saturated for integer outputs. Windows of size 1
// are the identity (DALI skips them; multiplying by 1 and adding to 0 is exact).
// float16 data (LaplacianShape::half) follows DALI's float16 arithmetic, where float16 op float
// gives float16: every product is rounded to half precision (ties away from zero, as its
// half_float library), the sums stay float, and what DALI keeps in float16 buffers is rounded so
// too: the separable passes' intermediates (not the single pass of a partial without smoothing)
// and the accumulated partial derivatives.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

// DALI's largest window (OpenCV's windows go up to 31 too).
inline constexpr int kLaplacianMaxWindow = 31;

// The window of `size` taps (odd, 1..31): smoothing ones are binomial coefficients ([1, 2, 1]
// composed with itself), derivative ones (size >= 3) [1, -2, 1] composed with the smoothing
// window of size - 2. Computed in float by DALI's recurrence (LaplacianWindows), one tap added at
// a time, because from size 29 on the float sums are not the exact binomials.
const float* laplacian_window(bool derivative, int size);

// v rounded to the nearest float16 value, ties away from zero (overflow: infinity), as a float.
STOKER_HOST_DEVICE inline float half_round_away(float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  const uint32_t sign = b & 0x80000000u, a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) return v;  // inf, NaN
  float r = 0.f;
  if (a >= 0x00800000u) {  // float normals (float subnormals are far below half's range: 0)
    const int e = int(a >> 23) - 127;
    const int shift = e >= -14 ? 13 : -1 - e;  // the float significand bits half drops
    if (shift < 32) {
      const uint64_t m = (a & 0x7fffffu) | 0x800000u;
      const uint64_t q = (m + (uint64_t(1) << (shift - 1))) >> shift;
      r = ldexpf(float(q), e - 23 + shift);
      if (r > 65504.f) r = INFINITY;
    }
  }
  return sign ? -r : r;
}

// One sample: `planes` (leading channel or frame extents) of extent[0..axes) spatial values, each
// holding `channels` interleaved channels.
struct LaplacianShape {
  int64_t planes = 1;
  int axes = 2;
  int64_t extent[3] = {1, 1, 1};  // outermost first; only the first `axes` are used
  int64_t channels = 1;
  int window[3][3] = {{3, 3, 3}, {3, 3, 3}, {3, 3, 3}};  // [partial][axis]: odd sizes
  float scale[3] = {1.f, 1.f, 1.f};                      // per partial derivative
  bool half = false;  // float16 data: DALI's float16 arithmetic (above)
};

// Whether partial i of `s` runs as one pass (no smoothing: DALI's single convolution), whose
// result, unlike the separable passes', is never rounded to float16 before its scale.
STOKER_HOST_DEVICE inline bool laplacian_single_pass(const LaplacianShape& s, int i) {
  for (int a = 0; a < s.axes; ++a)
    if (a != i && s.window[i][a] != 1) return false;
  return true;
}

// Elements of one plane (the spatial extents times the channels).
inline int64_t laplacian_plane_size(const LaplacianShape& s) {
  int64_t v = s.channels;
  for (int a = 0; a < s.axes; ++a) v *= s.extent[a];
  return v;
}

// dst = src convolved along the axis of `n` elements between `outer` blocks and `inner`
// contiguous values (reflect-101 borders): per element, sum of w[k] * src[x - taps/2 + k] from 0.
// `half`: each product rounded by half_round_away; `round_out`: so is each result.
void laplacian_pass(const float* src, float* dst, int64_t outer, int64_t n, int64_t inner,
                    const float* w, int taps, bool half, bool round_out);
// acc = v * scale (first) or v * scale + acc, unfused, over `count` values; `round_half`: each
// result rounded by half_round_away.
void laplacian_accumulate(float* acc, const float* v, float scale, int64_t count, bool first,
                          bool round_half);

// The partial derivative `i` of one plane (already widened to float in `plane`) into `out`,
// `tmp` a scratch of the plane's size; returns where the result lies (out or tmp).
const float* laplacian_partial(const float* plane, float* out, float* tmp, const LaplacianShape& s,
                               int i);

// One sample. `scratch` grows to 4 planes of floats.
template <typename Out, typename In>
void laplacian_cpu(const In* in, Out* out, const LaplacianShape& s, std::vector<float>& scratch) {
  const int64_t v = laplacian_plane_size(s);
  if (v == 0 || s.planes == 0) return;
  scratch.resize(size_t(4 * v));
  float* plane = scratch.data();
  float* a = plane + v;
  float* b = a + v;
  float* acc = b + v;
  for (int64_t p = 0; p < s.planes; ++p) {
    const In* src = in + p * v;
    for (int64_t e = 0; e < v; ++e) plane[e] = to_float(src[e]);
    // DALI keeps the sum in float16 but for one axis and a float output (no buffer then).
    const bool round_acc = s.half && !(s.axes == 1 && std::is_same_v<Out, float>);
    for (int i = 0; i < s.axes; ++i) {
      const float* d = laplacian_partial(plane, a, b, s, i);
      laplacian_accumulate(acc, d, s.scale[i], v, i == 0, round_acc);
    }
    Out* dst = out + p * v;
    for (int64_t e = 0; e < v; ++e) dst[e] = convert_sat<Out>(acc[e]);
  }
}

}  // namespace stoker::kernels
