#include <cuda_runtime.h>

#include "stoker/kernels/memory/fill_gpu.hpp"

namespace stoker::kernels {
namespace {

// 16 bytes per thread where aligned; a grid-stride loop so any size takes one launch.
__global__ void fill_bytes_kernel(uint8_t* p, size_t bytes, uint8_t value) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t vec = bytes / 16;
  uint4 pattern;
  uint32_t v = value * 0x01010101u;
  pattern.x = pattern.y = pattern.z = pattern.w = v;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < vec; i += stride)
    reinterpret_cast<uint4*>(p)[i] = pattern;
  for (size_t i = vec * 16 + blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < bytes; i += stride)
    p[i] = value;
}

}  // namespace

int fill_bytes_gpu(void* device_ptr, size_t bytes, uint8_t value, void* cuda_stream) {
  if (bytes == 0) return 0;
  if (reinterpret_cast<uintptr_t>(device_ptr) % 16 != 0) {
    return int(cudaMemsetAsync(device_ptr, value, bytes, static_cast<cudaStream_t>(cuda_stream)));
  }
  const int threads = 256;
  size_t blocks = (bytes / 16 + threads - 1) / threads;
  if (blocks == 0) blocks = 1;
  if (blocks > 4096) blocks = 4096;
  fill_bytes_kernel<<<unsigned(blocks), threads, 0, static_cast<cudaStream_t>(cuda_stream)>>>(
      static_cast<uint8_t*>(device_ptr), bytes, value);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
