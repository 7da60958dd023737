// crop_mirror_normalize_nd on the GPU: one thread per output element, the samples' blocks
// (blockIdx.y: the sample) striding over its elements; the arithmetic of the CPU twin
// (crop_mirror_normalize_nd.hpp), element for element.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/half_gpu.cuh"
#include "stoker/kernels/normalize/crop_mirror_normalize_nd.hpp"

namespace stoker::kernels {
namespace {

template <typename In, typename Out>
__global__ void cmn_nd_kernel(const CmnNdSample* __restrict__ samples) {
  const CmnNdSample& s = samples[blockIdx.y];
  int64_t total = 1;
  for (int k = 0; k < s.ndim; ++k) total *= s.shape[k];
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    bool inside = true;
    int64_t offset = 0, channel = 0, rem = e;
    for (int k = s.ndim - 1; k >= 0; --k) {
      const int64_t i = rem % s.shape[k];
      rem /= s.shape[k];
      const int64_t p = s.start[k] + s.step[k] * i;
      inside = inside && p >= 0 && p < s.extent[k];
      offset += p * s.stride[k];
      if (k == s.c_axis) channel = i;
    }
    const float v =
        inside ? (load_as_float(in, offset) - s.mean[channel]) * s.inv_std[channel] + s.shift
               : s.fill[channel];
    out[e] = store_float<Out>(v);
  }
}

template <typename In>
int dispatch_out(const CmnNdSample* samples, dim3 grid, DType out_type, cudaStream_t stream) {
  switch (out_type) {
    case DType::kF32:
      cmn_nd_kernel<In, float><<<grid, 256, 0, stream>>>(samples);
      break;
    case DType::kF16:
      cmn_nd_kernel<In, __half><<<grid, 256, 0, stream>>>(samples);
      break;
    case DType::kU8:
      cmn_nd_kernel<In, uint8_t><<<grid, 256, 0, stream>>>(samples);
      break;
    case DType::kI8:
      cmn_nd_kernel<In, int8_t><<<grid, 256, 0, stream>>>(samples);
      break;
    default:
      return int(cudaErrorInvalidValue);
  }
  return int(cudaGetLastError());
}

}  // namespace

int crop_mirror_normalize_nd_gpu(const CmnNdSample* samples, int n, int64_t max_elements,
                                 DType in_type, DType out_type, StreamHandle stream) {
  if (n == 0 || max_elements == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);  // gridDim.y
  // Enough blocks for the largest sample, at most 1024 per sample (each thread then loops).
  const auto blocks = unsigned(std::min<int64_t>((max_elements + 255) / 256, 1024));
  const dim3 grid(blocks, unsigned(n));
  auto st = cudaStream_t(stream);
  switch (in_type) {
    case DType::kU8:
      return dispatch_out<uint8_t>(samples, grid, out_type, st);
    case DType::kI16:
      return dispatch_out<int16_t>(samples, grid, out_type, st);
    case DType::kU16:
      return dispatch_out<uint16_t>(samples, grid, out_type, st);
    case DType::kI32:
      return dispatch_out<int32_t>(samples, grid, out_type, st);
    case DType::kF16:
      return dispatch_out<HalfBits>(samples, grid, out_type, st);
    case DType::kF32:
      return dispatch_out<float>(samples, grid, out_type, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
