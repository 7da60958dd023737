#include <cuda_runtime.h>

#include "stoker/kernels/color/debayer_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kThreads = 256;

// Block (x, sample): a grid-stride loop over the sample's pixels.
template <typename T>
__global__ void debayer(const DebayerGpuSample* __restrict__ samples, DebayerAlgorithm alg) {
  const DebayerGpuSample& s = samples[blockIdx.y];
  const int64_t pixels = s.shape.height * s.shape.width;
  const int ch = alg == DebayerAlgorithm::kGray ? 1 : 3;
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < pixels;
       k += int64_t(gridDim.x) * blockDim.x)
    debayer_pixel(in, s.shape, s.pattern, alg, k / s.shape.width, k % s.shape.width, out + k * ch);
}

}  // namespace

int debayer_gpu(const DebayerGpuSample* samples, int n, int64_t max_pixels, DType type,
                DebayerAlgorithm alg, StreamHandle stream) {
  if (n == 0 || max_pixels == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const int64_t blocks = (max_pixels + kThreads - 1) / kThreads;
  const dim3 grid(unsigned(blocks < 4096 ? blocks : 4096), unsigned(n));
  auto st = cudaStream_t(stream);
  if (type == DType::kU8)
    debayer<uint8_t><<<grid, kThreads, 0, st>>>(samples, alg);
  else if (type == DType::kU16)
    debayer<uint16_t><<<grid, kThreads, 0, st>>>(samples, alg);
  else
    return int(cudaErrorInvalidValue);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
