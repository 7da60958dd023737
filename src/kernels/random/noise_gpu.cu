#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/random/noise_gpu.hpp"

namespace stoker::kernels {
namespace {

// blockIdx.y: the sample; x: a grid-stride loop over its work items.
template <typename T>
__global__ void noise_kernel(NoiseKind kind, const NoiseSample* __restrict__ samples) {
  const NoiseSample s = samples[blockIdx.y];
  const int64_t items = noise_work_items(kind, s.units);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += int64_t(gridDim.x) * blockDim.x)
    noise_item<T>(kind, s, i);
}

template <typename T>
int launch(NoiseKind kind, const NoiseSample* samples, dim3 grid, dim3 block, cudaStream_t st) {
  noise_kernel<T><<<grid, block, 0, st>>>(kind, samples);
  return int(cudaGetLastError());
}

}  // namespace

int noise_gpu(NoiseKind kind, const NoiseSample* samples, int n, int64_t max_units, DType dtype,
              StreamHandle stream) {
  if (n == 0 || max_units == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  constexpr int kThreads = 256;
  const int64_t items = noise_work_items(kind, max_units);
  // Enough blocks to fill the device for one sample; larger samples loop.
  const int64_t blocks = std::min<int64_t>((items + kThreads - 1) / kThreads, 1024);
  const dim3 grid{unsigned(blocks), unsigned(n)}, block{unsigned(kThreads)};
  auto st = cudaStream_t(stream);
  switch (dtype) {
    case DType::kU8:
      return launch<uint8_t>(kind, samples, grid, block, st);
    case DType::kI8:
      return launch<int8_t>(kind, samples, grid, block, st);
    case DType::kU16:
      return launch<uint16_t>(kind, samples, grid, block, st);
    case DType::kI16:
      return launch<int16_t>(kind, samples, grid, block, st);
    case DType::kU32:
      return launch<uint32_t>(kind, samples, grid, block, st);
    case DType::kI32:
      return launch<int32_t>(kind, samples, grid, block, st);
    case DType::kU64:
      return launch<uint64_t>(kind, samples, grid, block, st);
    case DType::kI64:
      return launch<int64_t>(kind, samples, grid, block, st);
    case DType::kF32:
      return launch<float>(kind, samples, grid, block, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
