// N-dimensional slice with padding: copies the window [start, start + out_shape) of a C-ordered
// array of `elem_size`-byte elements; positions outside the input take `fill` (one element's
// bytes). Rows (the innermost axis) are copied with memcpy: the cost is the window's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace stoker::kernels {

inline void slice_cpu(const uint8_t* in, const std::vector<int64_t>& in_shape, size_t elem_size,
                      const std::vector<int64_t>& start, const std::vector<int64_t>& out_shape,
                      const uint8_t* fill, uint8_t* out) {
  const size_t nd = in_shape.size();
  if (nd == 0) {
    std::memcpy(out, in, elem_size);
    return;
  }
  int64_t out_volume = 1;
  for (auto d : out_shape) out_volume *= d;
  if (out_volume == 0) return;
  std::vector<int64_t> in_stride(nd, 1);  // in elements
  for (size_t d = nd - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * in_shape[d];
  const int64_t row = out_shape[nd - 1];
  // The part of each output row that lies inside the input: [lo, hi) in output coordinates.
  const int64_t lo = std::min(row, std::max<int64_t>(0, -start[nd - 1]));
  const int64_t hi = std::max(lo, std::min(row, in_shape[nd - 1] - start[nd - 1]));
  std::vector<int64_t> pos(nd, 0);  // output position of the current row (last axis 0)
  for (int64_t r = 0; r < out_volume / row; ++r) {
    uint8_t* o = out + size_t(r * row) * elem_size;
    bool inside = true;
    int64_t offset = 0;  // of the row's first element in the input
    for (size_t d = 0; d + 1 < nd; ++d) {
      const int64_t x = start[d] + pos[d];
      inside &= x >= 0 && x < in_shape[d];
      offset += x * in_stride[d];
    }
    offset += start[nd - 1];
    for (int64_t k = 0; k < row; ++k) {
      if (inside && k == lo && hi > lo) {
        std::memcpy(o + size_t(k) * elem_size, in + size_t(offset + k) * elem_size,
                    size_t(hi - lo) * elem_size);
        k = hi - 1;
      } else {
        std::memcpy(o + size_t(k) * elem_size, fill, elem_size);
      }
    }
    for (size_t d = nd - 1; d-- > 0;) {  // next row: odometer over the outer axes
      if (++pos[d] < out_shape[d]) break;
      pos[d] = 0;
    }
  }
}

}  // namespace stoker::kernels
