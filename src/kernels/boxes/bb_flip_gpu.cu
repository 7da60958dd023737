#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/boxes/bb_flip.hpp"

namespace stoker::kernels {
namespace {

__global__ void bb_flip_kernel(const BbFlipGpuSample* __restrict__ samples) {
  const BbFlipGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s.boxes; i += step) {
    bb_flip_box(s.out + 4 * i, s.in + 4 * i, s.params);
  }
}

}  // namespace

int bb_flip_gpu(const BbFlipGpuSample* samples, int n, int64_t max_boxes, StreamHandle stream) {
  if (n == 0 || max_boxes == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const int block = 128;
  const dim3 grid(unsigned(std::min<int64_t>((max_boxes + block - 1) / block, 1024)),
                  unsigned(n));
  bb_flip_kernel<<<grid, block, 0, cudaStream_t(stream)>>>(samples);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
