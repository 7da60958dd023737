#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "stoker/kernels/color/color_gpu.hpp"
#include "stoker/kernels/common/convert_gpu.cuh"

namespace stoker::kernels {
namespace {

template <typename T>
__device__ __forceinline__ float to_f(T v) {
  return float(v);
}
template <>
__device__ __forceinline__ float to_f<__half>(__half v) {
  return __half2float(v);
}

template <typename In, typename Out, bool kMatrix>
__global__ void color_kernel(const ColorGpuSample* __restrict__ samples) {
  const ColorGpuSample& s = samples[blockIdx.y];
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  if constexpr (kMatrix) {
    const int ic = s.in_channels, oc = s.out_channels;
    const int64_t pixels = s.elements / ic;
    for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += stride) {
      const In* px = in + ic * p;
      const float r = to_f(px[0]), g = ic == 3 ? to_f(px[1]) : r, b = ic == 3 ? to_f(px[2]) : r;
      for (int c = 0; c < oc; ++c)
        out[oc * p + c] = store_float<Out>(s.m[3 * c] * r + s.m[3 * c + 1] * g +
                                           s.m[3 * c + 2] * b + s.offset[c]);
    }
  } else {
    for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < s.elements; e += stride)
      out[e] = store_float<Out>(to_f(in[e]) * s.gain + s.bias);
  }
}

template <typename In, typename Out>
int launch(const ColorGpuSample* samples, int n, int64_t max_elements, bool matrix,
           cudaStream_t stream) {
  const int block = 256;
  const int64_t work = max_elements;  // an upper bound of the pixels too
  const dim3 grid(unsigned(std::min<int64_t>((work + block - 1) / block, 1024)), unsigned(n));
  if (matrix)
    color_kernel<In, Out, true><<<grid, block, 0, stream>>>(samples);
  else
    color_kernel<In, Out, false><<<grid, block, 0, stream>>>(samples);
  return int(cudaGetLastError());
}

template <typename In>
int dispatch_out(const ColorGpuSample* samples, int n, int64_t max_elements, bool matrix, DType out,
                 cudaStream_t stream) {
  switch (out) {
    case DType::kU8:
      return launch<In, uint8_t>(samples, n, max_elements, matrix, stream);
    case DType::kF16:
      return launch<In, __half>(samples, n, max_elements, matrix, stream);
    case DType::kF32:
      return launch<In, float>(samples, n, max_elements, matrix, stream);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace

int color_gpu(const ColorGpuSample* samples, int n, int64_t max_elements, bool matrix,
              DType in_type, DType out_type, StreamHandle stream) {
  if (n == 0 || max_elements == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  auto s = cudaStream_t(stream);
  switch (in_type) {
    case DType::kU8:
      return dispatch_out<uint8_t>(samples, n, max_elements, matrix, out_type, s);
    case DType::kF16:
      return dispatch_out<__half>(samples, n, max_elements, matrix, out_type, s);
    case DType::kF32:
      return dispatch_out<float>(samples, n, max_elements, matrix, out_type, s);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
