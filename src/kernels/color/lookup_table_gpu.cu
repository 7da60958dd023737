#include <cuda_runtime.h>

#include "stoker/kernels/color/lookup_table_gpu.hpp"
#include "stoker/kernels/common/visit_types.hpp"

namespace stoker::kernels {
namespace {

constexpr int kThreads = 256;

// Block (x, sample): a grid-stride loop over the sample's elements.
template <typename In, typename E>
__global__ void gather(const LutGpuSample* __restrict__ samples, const E* __restrict__ table,
                       int64_t size) {
  const LutGpuSample& s = samples[blockIdx.y];
  const In* in = static_cast<const In*>(s.in);
  E* out = static_cast<E*>(s.out);
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < s.elements;
       k += int64_t(gridDim.x) * blockDim.x) {
    const In key = in[k];
    const bool inside = (In(-1) > In(0) || key >= In(0)) && uint64_t(key) < uint64_t(size);
    out[k] = table[inside ? int64_t(key) : size];
  }
}

template <typename In>
int launch(const LutGpuSample* samples, int n, int64_t max_elements, const void* table,
           int64_t size, int entry_bytes, cudaStream_t st) {
  const int64_t blocks = (max_elements + kThreads - 1) / kThreads;
  const dim3 grid(unsigned(blocks < 4096 ? blocks : 4096), unsigned(n));
  switch (entry_bytes) {
    case 1:
      gather<In, uint8_t>
          <<<grid, kThreads, 0, st>>>(samples, static_cast<const uint8_t*>(table), size);
      break;
    case 2:
      gather<In, uint16_t>
          <<<grid, kThreads, 0, st>>>(samples, static_cast<const uint16_t*>(table), size);
      break;
    case 4:
      gather<In, uint32_t>
          <<<grid, kThreads, 0, st>>>(samples, static_cast<const uint32_t*>(table), size);
      break;
    case 8:
      gather<In, uint64_t>
          <<<grid, kThreads, 0, st>>>(samples, static_cast<const uint64_t*>(table), size);
      break;
    default:
      return int(cudaErrorInvalidValue);
  }
  return int(cudaGetLastError());
}

}  // namespace

int lookup_table_gpu(const LutGpuSample* samples, int n, int64_t max_elements, DType in,
                     const void* table, int64_t size, int entry_bytes, StreamHandle stream) {
  if (n == 0 || max_elements == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  int rc = int(cudaErrorInvalidValue);
  visit_types<DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8, DType::kI16,
              DType::kI32, DType::kI64>(in, [&](auto tag) {
    using In = decltype(tag);
    rc = launch<In>(samples, n, max_elements, table, size, entry_bytes, cudaStream_t(stream));
  });
  return rc;
}

}  // namespace stoker::kernels
