// An N-D strided copy on the GPU, one launch per batch of descriptors: what transpose, pad,
// cat and stack do to bytes. For every index i of a descriptor's iteration space,
//   out[sum_k i_k * out_stride_k] = in[sum_k (in_start_k + i_k) * in_stride_k]
// when 0 <= in_start_k + i_k < in_shape_k on every axis, else the descriptor's fill value
// (its low element-size bytes). Strides are in elements; elements are 1, 2, 4 or 8 bytes.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

constexpr int kCopyMaxDims = 6;

struct StridedCopyGpu {
  const void* in = nullptr;
  void* out = nullptr;
  int32_t ndim = 0;
  int64_t count = 0;  // product of shape
  int64_t shape[kCopyMaxDims] = {};
  int64_t out_stride[kCopyMaxDims] = {};
  int64_t in_stride[kCopyMaxDims] = {};
  int64_t in_start[kCopyMaxDims] = {};
  int64_t in_shape[kCopyMaxDims] = {};
  uint64_t fill = 0;
};

// `copies`: a device array of n descriptors.
int strided_copy_gpu(const StridedCopyGpu* copies, int n, int64_t max_count, int element_size,
                     StreamHandle stream);

// Element gathers (jitter): component k = (y * w + x) * c + ch of an h x w x c image of
// `element_size`-byte components (1, 2, 4 or 8) takes the input's component (y + dy, x + dx, ch), where
// (dy, dx) = offsets[2k], offsets[2k + 1] point inside the image (the caller clamps them).
struct GatherGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  const int8_t* offsets = nullptr;  // device: 2 per component
  int64_t h = 0, w = 0, c = 0;
};
int gather_elements_gpu(const GatherGpuSample* samples, int n, int64_t max_elements,
                        int element_size, StreamHandle stream);

}  // namespace stoker::kernels
