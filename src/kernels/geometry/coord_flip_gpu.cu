#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/geometry/coord_flip.hpp"

namespace stoker::kernels {
namespace {

__global__ void coord_flip_kernel(const CoordFlipGpuSample* __restrict__ samples) {
  const CoordFlipGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s.count; i += step) {
    const int d = int(i % s.params.ndim);
    s.out[i] = s.params.flip[d] ? s.params.origin[d] - s.in[i] : s.in[i];
  }
}

}  // namespace

int coord_flip_gpu(const CoordFlipGpuSample* samples, int n, int64_t max_count,
                   StreamHandle stream) {
  if (n == 0 || max_count == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_count + block - 1) / block, 1024)),
                  unsigned(n));
  coord_flip_kernel<<<grid, block, 0, cudaStream_t(stream)>>>(samples);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
