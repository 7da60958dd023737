// Affine warp of an H x W x C image (channels last) on the CPU.
//
// Conventions: pixel centres at +0.5. For output pixel (x, y) the source point is
// (sx, sy) = M * (x + 0.5, y + 0.5, 1), M a 2x3 matrix in (x, y) order mapping output to
// input. Linear: bilinear interpolation between the four pixels around (sx - 0.5, sy - 0.5);
// nearest: pixel (floor(sx), floor(sy)). Taps outside the image take `fill` (one value per
// channel) when given, else the nearest border pixel (clamp). Float arithmetic, rounded half
// away from zero and saturated for integer outputs.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/common/visit_types.hpp"

namespace stoker::kernels {

using Affine = std::array<double, 6>;  // m00 m01 m02 m10 m11 m12

// The element types of a warp: uint8, int16, uint16, int32 and float32 (f(T{}); false for others).
template <typename F>
bool visit_warp_types(DType type, F&& f) {
  return visit_types<DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kF32>(type, f);
}

// The (input, output) type pairs of a warp, on the CPU and the GPU: f(In{}, Out{}) for the
// input's type, float32 from any input, or any of them from float32 (the pairs DALI's warps
// take, uint16 besides); false, calling nothing, for other pairs.
template <typename F>
bool visit_warp_pairs(DType in, DType out, F&& f) {
  bool found = false;
  visit_warp_types(in, [&](auto i) {
    using In = decltype(i);
    if (in == out) {
      found = true, f(i, i);
    } else if (out == DType::kF32) {
      found = true, f(i, float{});
    } else if constexpr (std::is_same_v<In, float>) {
      found = visit_warp_types(out, [&](auto o) { f(i, o); });
    }
  });
  return found;
}

inline bool warp_affine_dtype_supported(DType in, DType out) {
  return visit_warp_pairs(in, out, [](auto, auto) {});
}

template <typename Out, typename In>
void warp_affine_cpu(const In* in, int64_t h, int64_t w, int64_t c, Out* out, int64_t oh,
                     int64_t ow, const Affine& m, bool linear, const std::vector<float>* fill) {
  if (h == 0 || w == 0) {  // no source pixels: every output pixel is outside (fill, else 0)
    for (int64_t p = 0; p < oh * ow; ++p)
      for (int64_t ch = 0; ch < c; ++ch)
        out[p * c + ch] = convert_sat<Out>(fill ? (*fill)[size_t(ch) % fill->size()] : 0.f);
    return;
  }
  auto tap = [&](int64_t x, int64_t y, int64_t ch, bool& outside) -> float {
    outside = x < 0 || y < 0 || x >= w || y >= h;
    if (outside) {
      if (fill) return (*fill)[size_t(ch) % fill->size()];
      x = std::clamp<int64_t>(x, 0, w - 1);
      y = std::clamp<int64_t>(y, 0, h - 1);
    }
    return to_float(in[(y * w + x) * c + ch]);
  };
  for (int64_t y = 0; y < oh; ++y) {
    for (int64_t x = 0; x < ow; ++x) {
      const double px = x + 0.5, py = y + 0.5;
      const double sx = m[0] * px + m[1] * py + m[2];
      const double sy = m[3] * px + m[4] * py + m[5];
      Out* o = out + (y * ow + x) * c;
      bool outside = false;
      if (!linear) {
        const int64_t ix = int64_t(std::floor(sx)), iy = int64_t(std::floor(sy));
        for (int64_t ch = 0; ch < c; ++ch) o[ch] = convert_sat<Out>(tap(ix, iy, ch, outside));
        continue;
      }
      const double fx = sx - 0.5, fy = sy - 0.5;
      const int64_t x0 = int64_t(std::floor(fx)), y0 = int64_t(std::floor(fy));
      const float ax = float(fx - double(x0)), ay = float(fy - double(y0));
      for (int64_t ch = 0; ch < c; ++ch) {
        const float top = tap(x0, y0, ch, outside) * (1 - ax) + tap(x0 + 1, y0, ch, outside) * ax;
        const float bot =
            tap(x0, y0 + 1, ch, outside) * (1 - ax) + tap(x0 + 1, y0 + 1, ch, outside) * ax;
        o[ch] = convert_sat<Out>(top * (1 - ay) + bot * ay);
      }
    }
  }
}

}  // namespace stoker::kernels
