#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/tensor/copy_gpu.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
__global__ void strided_copy_kernel(const StridedCopyGpu* __restrict__ copies) {
  const StridedCopyGpu& c = copies[blockIdx.y];
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
      const int64_t at = c.in_start[k] + idx;
      inside = inside && at >= 0 && at < c.in_shape[k];
      o += idx * c.out_stride[k];
      src += at * c.in_stride[k];
    }
    out[o] = inside ? in[src] : fill;
  }
}

template <typename T>
int launch(const StridedCopyGpu* copies, int n, int64_t max_count, cudaStream_t stream) {
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_count + block - 1) / block, 2048)), unsigned(n));
  strided_copy_kernel<T><<<grid, block, 0, stream>>>(copies);
  return int(cudaGetLastError());
}

__global__ void gather_kernel(const GatherGpuSample* __restrict__ samples) {
  const GatherGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const auto* in = static_cast<const uint8_t*>(s.in);
  auto* out = static_cast<uint8_t*>(s.out);
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < s.h * s.w; p += step) {
    const int64_t y = p / s.w, x = p % s.w;
    const int64_t sy = y + s.offsets[2 * p], sx = x + s.offsets[2 * p + 1];
    const bool inside = sy >= 0 && sx >= 0 && sy < s.h && sx < s.w;
    const uint8_t* src = inside ? in + (sy * s.w + sx) * s.pixel_bytes : s.fill;
    uint8_t* dst = out + p * s.pixel_bytes;
    for (int b = 0; b < s.pixel_bytes; ++b) dst[b] = src[b];
  }
}

}  // namespace

int gather_pixels_gpu(const GatherGpuSample* samples, int n, int64_t max_pixels,
                      StreamHandle stream) {
  if (n == 0 || max_pixels == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_pixels + block - 1) / block, 2048)), unsigned(n));
  gather_kernel<<<grid, block, 0, cudaStream_t(stream)>>>(samples);
  return int(cudaGetLastError());
}

int strided_copy_gpu(const StridedCopyGpu* copies, int n, int64_t max_count, int element_size,
                     StreamHandle stream) {
  if (n == 0 || max_count == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  auto s = cudaStream_t(stream);
  switch (element_size) {
    case 1:
      return launch<uint8_t>(copies, n, max_count, s);
    case 2:
      return launch<uint16_t>(copies, n, max_count, s);
    case 4:
      return launch<uint32_t>(copies, n, max_count, s);
    case 8:
      return launch<uint64_t>(copies, n, max_count, s);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
