// Remap of one image on the CPU (remap.hpp's rules: NPP's, which DALI's GPU operator calls).
#pragma once

#include "stoker/kernels/geometry/remap.hpp"

namespace stoker::kernels {

// s: input and output h x w x c of T, maps h x w. Types: uint8, uint16, int16, float.
template <typename T>
void remap_cpu(const RemapSample& s, RemapInterp interp, float shift) {
  auto rows = [&](auto pixel) {
    for (int64_t y = 0; y < s.h; ++y)
      for (int64_t x = 0; x < s.w; ++x) pixel(x, y);
  };
  switch (interp) {
    case RemapInterp::kNearest:
      rows([&](int64_t x, int64_t y) { remap_pixel<T, RemapInterp::kNearest>(s, shift, x, y); });
      break;
    case RemapInterp::kLinear:
      rows([&](int64_t x, int64_t y) { remap_pixel<T, RemapInterp::kLinear>(s, shift, x, y); });
      break;
    case RemapInterp::kCubic:
      rows([&](int64_t x, int64_t y) { remap_pixel<T, RemapInterp::kCubic>(s, shift, x, y); });
      break;
  }
}

}  // namespace stoker::kernels
