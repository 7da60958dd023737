// Perspective warp of one image on the CPU (warp_perspective.hpp's arithmetic: OpenCV's).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "stoker/kernels/geometry/warp_perspective.hpp"

namespace stoker::kernels {

// OpenCV's saturate_cast<T>(float): rounded half to even, saturated (T: uint16 or int16);
// float passes through.
template <typename T>
inline T perspective_store_cpu(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    const float r = std::nearbyint(v);
    if (!(r == r)) return T(0);
    constexpr float lo = float(std::numeric_limits<T>::min()),
                    hi = float(std::numeric_limits<T>::max());
    return T(r < lo ? lo : r > hi ? hi : r);
  }
}

// s.in: h x w x C of T, s.out: oh x ow x C (1 <= C <= 4). Types: uint8, uint16, int16, float.
template <typename T>
void warp_perspective_cpu(const PerspectiveSample& s, int64_t C, PerspectiveInterp interp,
                          WarpBorder border) {
  T* out = static_cast<T*>(s.out);
  const int64_t bw0 = perspective_block_width(s.oh, s.ow);
  auto store = [](float v) { return perspective_store_cpu<T>(v); };
  const bool f = perspective_float_path<T>(C), linear = interp == PerspectiveInterp::kLinear;
  for (int64_t y = 0; y < s.oh; ++y)
    for (int64_t x = 0; x < s.ow; ++x) {
      T* o = out + (y * s.ow + x) * C;
      if (interp == PerspectiveInterp::kCubic)
        perspective_pixel_cubic<T>(s, C, border, x, y, o, store);
      else if (f && linear)
        perspective_pixel_f<T, true>(s, C, border, x, y, o, store);
      else if (f)
        perspective_pixel_f<T, false>(s, C, border, x, y, o, store);
      else if (linear)
        perspective_pixel<T, true>(s, C, border, bw0, x, y, o, store);
      else
        perspective_pixel<T, false>(s, C, border, bw0, x, y, o, store);
    }
}

}  // namespace stoker::kernels
