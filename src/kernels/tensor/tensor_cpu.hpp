// Data-movement kernels on C-ordered arrays of `elem_size`-byte elements, and the numeric cast.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

// out[j0, j1, ...] = in[i...] with out axis k = in axis perm[k].
inline void transpose_cpu(const uint8_t* in, const std::vector<int64_t>& in_shape,
                          const std::vector<int>& perm, size_t elem_size, uint8_t* out) {
  const size_t nd = in_shape.size();
  int64_t volume = 1;
  for (auto d : in_shape) volume *= d;
  if (volume == 0) return;
  std::vector<int64_t> in_stride(nd, 1), out_shape(nd), stride(nd);  // stride: in, per out axis
  for (size_t d = nd; d-- > 1;) in_stride[d - 1] = in_stride[d] * in_shape[d];
  for (size_t k = 0; k < nd; ++k) {
    out_shape[k] = in_shape[size_t(perm[k])];
    stride[k] = in_stride[size_t(perm[k])];
  }
  std::vector<int64_t> pos(nd, 0);
  int64_t src = 0;
  for (int64_t o = 0; o < volume; ++o) {
    std::memcpy(out + size_t(o) * elem_size, in + size_t(src) * elem_size, elem_size);
    for (size_t k = nd; k-- > 0;) {  // odometer over the output, tracking the input offset
      if (++pos[k] < out_shape[k]) {
        src += stride[k];
        break;
      }
      src -= stride[k] * (out_shape[k] - 1);
      pos[k] = 0;
    }
  }
}

// cat and stack: `outer` blocks from each of `k` inputs in turn (input j's blocks are
// block_bytes[j] long and consecutive in in[j]).
inline void join_cpu(const uint8_t* const* in, const size_t* block_bytes, size_t k, int64_t outer,
                     uint8_t* out) {
  for (int64_t b = 0; b < outer; ++b)
    for (size_t j = 0; j < k; ++j) {
      if (block_bytes[j] == 0) continue;
      std::memcpy(out, in[j] + size_t(b) * block_bytes[j], block_bytes[j]);
      out += block_bytes[j];
    }
}

template <typename Out, typename In>
void cast_cpu(const In* in, int64_t count, Out* out) {
  for (int64_t k = 0; k < count; ++k) out[k] = cast_value<Out>(in[k]);
}

}  // namespace stoker::kernels
