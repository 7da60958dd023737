// full and full_like: an output filled with a fill tensor broadcast numpy's way, converted
// with cast_value's rules (core/dtype.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

// Whether a fill of extents `fill` broadcasts to `out` as numpy's broadcast_to does: aligned
// from the innermost axis, each fill extent equals the output's or is 1, and the fill has no
// more axes than the output, but axes of extent 1.
inline bool broadcasts_to(const std::vector<int64_t>& fill, const std::vector<int64_t>& out) {
  for (size_t k = 0; k < fill.size(); ++k) {
    const int64_t f = fill[fill.size() - 1 - k];
    if (k >= out.size()) {
      if (f != 1) return false;
    } else if (f != 1 && f != out[out.size() - 1 - k]) {
      return false;
    }
  }
  return true;
}

// out[i_0, ..., i_n] = fill[j...] where each fill axis (aligned from the innermost) reads i_k
// when its extent is the output's and 0 when it is 1. Requires broadcasts_to(fill, out).
template <typename Out, typename In>
void broadcast_fill_cpu(Out* out, const std::vector<int64_t>& out_dims, const In* fill,
                        const std::vector<int64_t>& fill_dims) {
  int64_t volume = 1, fill_volume = 1;
  for (int64_t d : out_dims) volume *= d;
  for (int64_t d : fill_dims) fill_volume *= d;
  if (volume == 0) return;
  if (fill_volume == 1) {  // one value: the common case (a scalar fill)
    std::fill(out, out + volume, cast_value<Out>(fill[0]));
    return;
  }
  const size_t nd = out_dims.size();
  // The fill's element stride along each output axis (0 where it is broadcast).
  std::vector<int64_t> stride(nd, 0);
  int64_t s = 1;
  for (size_t k = 0; k < fill_dims.size() && k < nd; ++k) {
    const int64_t f = fill_dims[fill_dims.size() - 1 - k];
    if (f != 1) stride[nd - 1 - k] = s;
    s *= f;
  }
  const int64_t inner = out_dims[nd - 1], inner_stride = stride[nd - 1];
  std::vector<int64_t> pos(nd, 0);
  int64_t src = 0;
  for (int64_t o = 0; o < volume; o += inner) {
    for (int64_t x = 0; x < inner; ++x) out[o + x] = cast_value<Out>(fill[src + x * inner_stride]);
    for (size_t k = nd - 1; k-- > 0;) {  // odometer over the outer axes
      if (++pos[k] < out_dims[k]) {
        src += stride[k];
        break;
      }
      src -= stride[k] * (out_dims[k] - 1);
      pos[k] = 0;
    }
  }
}

}  // namespace stoker::kernels
