// CPU kernels of water, sphere (displacement resampling) and grid_mask over one HWC image,
// with displacement.hpp's arithmetic (the GPU kernels' too). Linear results are rounded half
// away from zero and saturated for integer types.
#pragma once

#include <cstdint>
#include <cstring>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/geometry/displacement.hpp"

namespace stoker::kernels {

// s.in and s.out: h x w x c of T. Water needs s.dx (h values) and s.dy (w values).
template <typename T>
void displace_cpu(const DisplaceSample& s, int64_t c, DisplaceMap map, bool linear) {
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  if (!s.apply) {
    if (s.h > 0 && s.w > 0 && c > 0) std::memcpy(out, in, size_t(s.h * s.w * c) * sizeof(T));
    return;
  }
  for (int64_t y = 0; y < s.h; ++y) {
    for (int64_t x = 0; x < s.w; ++x) {
      T* o = out + (y * s.w + x) * c;
      float sx = 0, sy = 0;
      if (map == DisplaceMap::kWater)
        sx = float(x) + s.dx[y], sy = float(y) + s.dy[x];
      else
        sphere_point(x, y, s.h, s.w, sx, sy);
      if (!sample_point_ok(sx) || !sample_point_ok(sy)) {
        const bool nan = linear && (is_nan(sx) || is_nan(sy));
        for (int64_t ch = 0; ch < c; ++ch) o[ch] = nan ? convert_sat<T>(sx + sy) : T(s.fill);
        continue;
      }
      if (!linear) {
        const int64_t ix = floor_i64(sx), iy = floor_i64(sy);
        const bool inside = ix >= 0 && iy >= 0 && ix < s.w && iy < s.h;
        for (int64_t ch = 0; ch < c; ++ch)
          o[ch] = inside ? in[(iy * s.w + ix) * c + ch] : T(s.fill);
        continue;
      }
      const LinearTaps t = linear_taps(sx, sy);
      for (int64_t ch = 0; ch < c; ++ch) {
        const float v =
            linear_mix(displace_tap(in, s.h, s.w, c, t.x0, t.y0, ch, s.fill),
                       displace_tap(in, s.h, s.w, c, t.x0 + 1, t.y0, ch, s.fill),
                       displace_tap(in, s.h, s.w, c, t.x0, t.y0 + 1, ch, s.fill),
                       displace_tap(in, s.h, s.w, c, t.x0 + 1, t.y0 + 1, ch, s.fill), t);
        o[ch] = convert_sat<T>(v);
      }
    }
  }
}

// s.in and s.out: h x w x c of T; pixels outside the kept grid become 0.
template <typename T>
void grid_mask_cpu(const GridMaskSample& s, int64_t c) {
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  for (int64_t y = 0; y < s.h; ++y)
    for (int64_t x = 0; x < s.w; ++x) {
      const bool keep = grid_mask_keep(s, x, y);
      const int64_t at = (y * s.w + x) * c;
      for (int64_t ch = 0; ch < c; ++ch) out[at + ch] = keep ? in[at + ch] : T(0);
    }
}

}  // namespace stoker::kernels
