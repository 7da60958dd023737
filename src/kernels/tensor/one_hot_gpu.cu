#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/tensor/one_hot.hpp"

namespace stoker::kernels {
namespace {

// Out is an unsigned carrier of the output's size: the kernel only stores on or off.
template <typename In, typename Out>
__global__ void one_hot_kernel(const OneHotGpuSample* __restrict__ samples, int64_t classes, Out on,
                               Out off) {
  const OneHotGpuSample& s = samples[blockIdx.y];
  const int64_t count = s.outer * classes * s.inner;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += step) {
    const int64_t o = k / (classes * s.inner), rest = k % (classes * s.inner);
    const int64_t c = rest / s.inner, i = rest % s.inner;
    out[k] = one_hot_class(in[o * s.inner + i]) == c ? on : off;
  }
}

template <typename In>
int launch(const OneHotGpuSample* samples, int n, int64_t max_count, int64_t classes, DType out,
           uint64_t on, uint64_t off, cudaStream_t stream) {
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_count + block - 1) / block, 1024)), unsigned(n));
  switch (dtype_size(out)) {
    case 1:
      one_hot_kernel<In, uint8_t>
          <<<grid, block, 0, stream>>>(samples, classes, uint8_t(on), uint8_t(off));
      break;
    case 2:
      one_hot_kernel<In, uint16_t>
          <<<grid, block, 0, stream>>>(samples, classes, uint16_t(on), uint16_t(off));
      break;
    case 4:
      one_hot_kernel<In, uint32_t>
          <<<grid, block, 0, stream>>>(samples, classes, uint32_t(on), uint32_t(off));
      break;
    default:
      one_hot_kernel<In, uint64_t><<<grid, block, 0, stream>>>(samples, classes, on, off);
      break;
  }
  return int(cudaGetLastError());
}

}  // namespace

int one_hot_gpu(const OneHotGpuSample* samples, int n, int64_t max_count, int64_t classes, DType in,
                DType out, uint64_t on_bits, uint64_t off_bits, StreamHandle stream) {
  if (n == 0 || max_count == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  auto s = cudaStream_t(stream);
  return visit_one_hot(in, "one_hot input", [&](auto tag) {
    using In = typename decltype(tag)::type;
    return launch<In>(samples, n, max_count, classes, out, on_bits, off_bits, s);
  });
}

}  // namespace stoker::kernels
