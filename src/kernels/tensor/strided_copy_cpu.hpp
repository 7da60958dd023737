// The CPU's strided copy: the semantics of copy_gpu.hpp's StridedCopy, row by row, the inside
// part of each row copied with one memcpy where both sides are contiguous.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stoker/kernels/tensor/copy_gpu.hpp"

namespace stoker::kernels {

inline void strided_copy_cpu(const StridedCopy& c, size_t element_size) {
  const auto* in = static_cast<const uint8_t*>(c.in);
  auto* out = static_cast<uint8_t*>(c.out);
  const size_t es = element_size;
  // Input offsets are signed: a negative stride (a subscript's ::-1) reads backwards from `in`.
  const auto ies = int64_t(element_size);
  const auto* fill = reinterpret_cast<const uint8_t*>(&c.fill);  // its low bytes (little-endian)
  if (c.ndim == 0) {
    std::memcpy(out, in, es);
    return;
  }
  if (c.count == 0) return;
  const int last = c.ndim - 1;
  const int64_t row = c.shape[last];
  // The run of the last axis that reads the input in order: [lo, hi).
  int64_t lo = 0, hi = 0;
  if (c.in_stride[last] == 1 && c.out_stride[last] == 1) {
    lo = std::min<int64_t>(row, std::max<int64_t>(0, -c.in_start[last]));
    hi = std::max<int64_t>(lo, std::min<int64_t>(row, c.in_shape[last] - c.in_start[last]));
  }
  int64_t pos[kCopyMaxDims] = {};
  for (int64_t r = 0; r < c.count / row; ++r) {
    int64_t o = 0, src = 0;
    bool inside = true;
    for (int k = 0; k < last; ++k) {
      const int64_t at = border_index(c.in_start[k] + pos[k], c.in_shape[k], c.border[k]);
      inside = inside && at >= 0;
      o += pos[k] * c.out_stride[k];
      src += at * c.in_stride[k];
    }
    for (int64_t i = 0; i < row; ++i) {
      uint8_t* dst = out + size_t(o + i * c.out_stride[last]) * es;
      if (inside && i == lo && hi > lo) {
        std::memcpy(dst, in + (src + c.in_start[last] + lo) * ies, size_t(hi - lo) * es);
        i = hi - 1;
        continue;
      }
      const int64_t at = border_index(c.in_start[last] + i, c.in_shape[last], c.border[last]);
      if (inside && at >= 0) {
        std::memcpy(dst, in + (src + at * c.in_stride[last]) * ies, es);
      } else {
        std::memcpy(dst, fill, es);
      }
    }
    for (int k = last; k-- > 0;) {  // next row: odometer over the outer axes
      if (++pos[k] < c.shape[k]) break;
      pos[k] = 0;
    }
  }
}

}  // namespace stoker::kernels
