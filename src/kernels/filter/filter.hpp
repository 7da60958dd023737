// fn.filter's computation: the correlation of a sample with a filter (DALI's "convolution",
// which does not flip the filter), 2-D or 3-D, per channel, with the arithmetic of DALI's CPU
// operator, which is OpenCV's filter2D:
//   out[z][y][x][c] = sum over the filter's non-zero taps t, in row-major order, of
//                     k[t] * in[z + tz - az][y + ty - ay][x + tx - ax][c]
// in float32, from 0, the taps outside the sample given by the border mode (border.hpp), then
// rounded half to even (cvRound) and saturated for integer outputs. OpenCV accumulates each
// tap with a fused multiply-add (one rounding) in its 256-bit vector code and with a product
// then a sum elsewhere; which one an element gets depends on its place in the row of W x C
// values (fused_prefix). Reproducing that makes the results DALI's bit for bit, on the CPU here
// and on the GPU (filter_gpu.hpp) alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/filter/border.hpp"

namespace stoker::kernels {

// One sample as planes (the leading channel or frame extents, filtered alike) of
// depth x height x width x channels (channels interleaved; 2-D: depth 1).
struct FilterShape {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};  // 'same': in; 'valid': in - k + 1
  int64_t channels = 1;
  int64_t k[3] = {1, 1, 1};       // the filter's extents
  int64_t anchor[3] = {0, 0, 0};  // the tap over the output point ('valid': 0)
  Border border = Border::kReflect101;
  int64_t fused = 0;  // row elements (x * channels + c) below this accumulate with an FMA
};

// How many elements of a row of `row` values OpenCV (DALI 2.4's build, on a CPU with AVX2)
// accumulates with fused multiply-adds: its 256-bit vector loops use them and cover the row
// down to a multiple of 4 values (8-bit and 16-bit integers kept as they are) or of 8 (float to
// float); the rest, and every conversion to float32 from another type, multiply then add.
inline int64_t fused_prefix(DType in, DType out, int64_t row) {
  if (in != out) return 0;
  if (in == DType::kU8 || in == DType::kU16 || in == DType::kI16) return row - row % 4;
  if (in == DType::kF32) return row - row % 8;
  return 0;
}

// acc[e] += src[e] * w for e < n: fused (one rounding) for e < fused, else a product and a sum.
void filter_accumulate(float* acc, const float* src, float w, int64_t n, int64_t fused);

// A float as an integer output by cvRound (half to even) and saturation (NaN: 0); floats as is.
// Rounded by adding and removing 1.5 * 2^23, which leaves the nearest integer (ties to even,
// the default rounding mode) of a value clamped far below 2^22: no libm call per value.
template <typename T>
inline T filter_store(float v) {
  if constexpr (std::is_integral_v<T>) {
    static_assert(sizeof(T) <= 2);
    constexpr float lo = float(std::numeric_limits<T>::min());
    constexpr float hi = float(std::numeric_limits<T>::max());
    constexpr float kMagic = 12582912.f;
    const float c = v == v ? (v < lo - 1.f ? lo - 1.f : (v > hi + 1.f ? hi + 1.f : v)) : 0.f;
    const float r = (c + kMagic) - kMagic;
    return T(r <= lo ? lo : r >= hi ? hi : r);
  } else {
    return convert_sat<T>(v);
  }
}

struct FilterTap {
  int64_t z, y, x;
  float w;
};

// The filter's non-zero taps in row-major order (OpenCV skips the zeros).
inline std::vector<FilterTap> filter_taps(const float* k, const FilterShape& s) {
  std::vector<FilterTap> taps;
  for (int64_t z = 0; z < s.k[0]; ++z)
    for (int64_t y = 0; y < s.k[1]; ++y)
      for (int64_t x = 0; x < s.k[2]; ++x) {
        const float w = k[(z * s.k[1] + y) * s.k[2] + x];
        if (w != 0.f) taps.push_back({z, y, x, w});
      }
  return taps;
}

// One sample. Each plane is first widened to float with its border (a padded copy in
// `scratch`), so that every tap reads a contiguous row.
template <typename Out, typename In>
void filter_cpu(const In* in, Out* out, const float* k, const FilterShape& s, float fill,
                std::vector<float>& scratch) {
  const int64_t C = s.channels, OW = s.out[2] * C;
  for (int d = 0; d < 3; ++d)
    if (s.out[d] == 0 || s.in[d] == 0) return;  // nothing to compute (or to reflect into)
  if (C == 0 || s.planes == 0) return;
  const auto taps = filter_taps(k, s);
  const int64_t PD = s.out[0] + s.k[0] - 1, PH = s.out[1] + s.k[1] - 1;
  const int64_t PW = s.out[2] + s.k[2] - 1, prow = PW * C;
  scratch.resize(size_t(PD * PH * prow + OW));
  float* pad = scratch.data();
  float* acc = pad + PD * PH * prow;
  std::vector<int64_t> xs(static_cast<size_t>(PW));
  for (int64_t x = 0; x < PW; ++x) xs[size_t(x)] = border_index(x - s.anchor[2], s.in[2], s.border);
  const int64_t in_plane = s.in[0] * s.in[1] * s.in[2] * C;
  const int64_t out_plane = s.out[0] * s.out[1] * OW;
  for (int64_t p = 0; p < s.planes; ++p) {
    const In* src = in + p * in_plane;
    for (int64_t z = 0; z < PD; ++z)
      for (int64_t y = 0; y < PH; ++y) {
        float* row = pad + (z * PH + y) * prow;
        const int64_t iz = border_index(z - s.anchor[0], s.in[0], s.border);
        const int64_t iy = border_index(y - s.anchor[1], s.in[1], s.border);
        if (iz < 0 || iy < 0) {
          std::fill(row, row + prow, fill);
          continue;
        }
        const In* srow = src + (iz * s.in[1] + iy) * s.in[2] * C;
        for (int64_t x = 0; x < PW; ++x) {
          const int64_t ix = xs[size_t(x)];
          for (int64_t c = 0; c < C; ++c)
            row[x * C + c] = ix < 0 ? fill : to_float(srow[ix * C + c]);
        }
      }
    Out* dst = out + p * out_plane;
    for (int64_t z = 0; z < s.out[0]; ++z)
      for (int64_t y = 0; y < s.out[1]; ++y) {
        std::fill(acc, acc + OW, 0.f);
        for (const auto& t : taps)
          filter_accumulate(acc, pad + ((z + t.z) * PH + y + t.y) * prow + t.x * C, t.w, OW,
                            s.fused);
        Out* d = dst + (z * s.out[1] + y) * OW;
        for (int64_t e = 0; e < OW; ++e) d[e] = filter_store<Out>(acc[e]);
      }
  }
}

}  // namespace stoker::kernels
