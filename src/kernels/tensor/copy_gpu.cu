#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/tensor/copy_gpu.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
__global__ void strided_copy_kernel(const StridedCopy* __restrict__ copies) {
  const StridedCopy& c = copies[blockIdx.y];
  const T fill = T(c.fill);  // the low bytes (little-endian)
  const T* in = static_cast<const T*>(c.in);
  T* out = static_cast<T*>(c.out);
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < c.count; i += step) {
    int64_t rest = i, o = 0, src = 0;
    bool inside = true;
    for (int k = c.ndim - 1; k >= 0; --k) {  // the last axis varies fastest
      const int64_t idx = rest % c.shape[k];
      rest /= c.shape[k];
      const int64_t at = border_index(c.in_start[k] + idx, c.in_shape[k], c.border[k]);
      inside = inside && at >= 0;
      o += idx * c.out_stride[k];
      src += at * c.in_stride[k];
    }
    out[o] = inside ? in[src] : fill;
  }
}

// Launches kernel<T> over n descriptors (gridDim.y) with enough blocks for `max_count` items,
// T the unsigned type of `element_size` bytes (1, 2, 4 or 8).
template <template <typename> class Kernel, typename Desc>
int launch_by_size(const Desc* desc, int n, int64_t max_count, int element_size,
                   StreamHandle stream) {
  if (n == 0 || max_count == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_count + block - 1) / block, 2048)), unsigned(n));
  const auto run = [&](auto tag) {
    Kernel<decltype(tag)>::launch(grid, block, cudaStream_t(stream), desc);
    return int(cudaGetLastError());
  };
  switch (element_size) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    case 8:
      return run(uint64_t{});
    default:
      return int(cudaErrorInvalidValue);
  }
}

template <typename T>
__global__ void gather_kernel(const GatherGpuSample* __restrict__ samples) {
  const GatherGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  const int64_t count = s.h * s.w * s.c;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += step) {
    const int64_t p = k / s.c, ch = k - p * s.c;
    const int64_t y = p / s.w + s.offsets[2 * k], x = p % s.w + s.offsets[2 * k + 1];
    out[k] = in[(y * s.w + x) * s.c + ch];
  }
}

template <typename T>
struct StridedCopyLaunch {
  static void launch(dim3 grid, int block, cudaStream_t s, const StridedCopy* d) {
    strided_copy_kernel<T><<<grid, block, 0, s>>>(d);
  }
};
template <typename T>
struct Gather {
  static void launch(dim3 grid, int block, cudaStream_t s, const GatherGpuSample* d) {
    gather_kernel<T><<<grid, block, 0, s>>>(d);
  }
};

}  // namespace

int gather_elements_gpu(const GatherGpuSample* samples, int n, int64_t max_elements,
                        int element_size, StreamHandle stream) {
  return launch_by_size<Gather>(samples, n, max_elements, element_size, stream);
}

int strided_copy_gpu(const StridedCopy* copies, int n, int64_t max_count, int element_size,
                     StreamHandle stream) {
  return launch_by_size<StridedCopyLaunch>(copies, n, max_count, element_size, stream);
}

}  // namespace stoker::kernels
