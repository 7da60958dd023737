#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/random/normal_gpu.hpp"

namespace stoker::kernels {
namespace {

// blockIdx.y: the sample; x: a grid-stride loop over its Philox blocks.
template <typename T, bool kWide>
__global__ void normal_kernel(const NormalSample* __restrict__ samples) {
  const NormalSample s = samples[blockIdx.y];
  const int64_t items = normal_items(s.count, kWide);
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < items;
       b += int64_t(gridDim.x) * blockDim.x)
    normal_item<T, kWide>(s, b);
}

}  // namespace

int normal_gpu(const NormalSample* samples, int n, int64_t max_count, DType dtype, bool wide,
               StreamHandle stream) {
  if (n == 0 || max_count == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  constexpr int kThreads = 256;
  const int64_t items = normal_items(max_count, wide);
  // Enough blocks to fill the device for one sample; larger samples loop.
  const int64_t blocks = std::min<int64_t>((items + kThreads - 1) / kThreads, 1024);
  const dim3 grid{unsigned(blocks), unsigned(n)}, block{unsigned(kThreads)};
  auto st = cudaStream_t(stream);
  return visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                     DType::kU64, DType::kI64, DType::kF32, DType::kF64>(
      dtype, "random.normal output", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (wide) {
          normal_kernel<T, true><<<grid, block, 0, st>>>(samples);
        } else {
          normal_kernel<T, false><<<grid, block, 0, st>>>(samples);
        }
        return int(cudaGetLastError());
      });
}

}  // namespace stoker::kernels
