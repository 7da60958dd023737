// An N-D strided copy, one launch per batch of descriptors on the GPU (strided_copy_cpu.hpp
// is the CPU's): what transpose, pad, cat, stack and slice do to bytes. For every index i of a
// descriptor's iteration space,
//   out[sum_k i_k * out_stride_k] = in[sum_k b_k(in_start_k + i_k) * in_stride_k]
// where b_k maps a position outside [0, in_shape_k) by the axis's Border (the fill value, its
// low element-size bytes, where any axis gives none). Strides are in elements; elements are 1,
// 2, 4 or 8 bytes.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

constexpr int kCopyMaxDims = 6;

// What an axis reads outside the input (DALI's out_of_bounds_policy): the fill value, the
// edge (clamp), a reflection repeating the edge (reflect_1001: ...cb|abc|cb...) or not
// (reflect_101: ...cb|abc|ba...), or the input repeated (wrap).
enum class Border : int8_t { kFill, kClamp, kReflect1001, kReflect101, kWrap };

// The input index position `at` reads on an axis of extent n, or -1 (the fill value).
STOKER_HOST_DEVICE inline int64_t border_index(int64_t at, int64_t n, Border b) {
  if (at >= 0 && at < n) return at;
  if (n <= 0 || b == Border::kFill) return -1;
  if (b == Border::kClamp) return at < 0 ? 0 : n - 1;
  const int64_t period = b == Border::kWrap ? n : b == Border::kReflect1001 ? 2 * n : 2 * n - 2;
  if (period == 0) return 0;  // reflect_101 of a single element
  int64_t m = at % period;
  if (m < 0) m += period;
  if (b == Border::kWrap || m < n) return m;
  return b == Border::kReflect1001 ? period - 1 - m : period - m;
}

struct StridedCopy {
  const void* in = nullptr;
  void* out = nullptr;
  int32_t ndim = 0;
  int64_t count = 0;  // product of shape
  int64_t shape[kCopyMaxDims] = {};
  int64_t out_stride[kCopyMaxDims] = {};
  int64_t in_stride[kCopyMaxDims] = {};
  int64_t in_start[kCopyMaxDims] = {};
  int64_t in_shape[kCopyMaxDims] = {};
  Border border[kCopyMaxDims] = {};
  uint64_t fill = 0;
};

// `copies`: a device array of n descriptors.
int strided_copy_gpu(const StridedCopy* copies, int n, int64_t max_count, int element_size,
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
