#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "stoker/kernels/normalize/normalize_gpu.hpp"
#include "stoker/kernels/common/convert_gpu.cuh"

namespace stoker::kernels {
namespace {

__device__ __forceinline__ int64_t group_of(const NormalizeGpuSample& s, int64_t flat) {
  int64_t g = 0;
  for (int d = 0; d < s.ndim; ++d) g += ((flat / s.stride[d]) % s.shape[d]) * s.rstride[d];
  return g;
}

template <typename T>
__device__ __forceinline__ double load(const void* p, int64_t k) {
  if constexpr (std::is_same_v<T, __half>)
    return double(__half2float(static_cast<const __half*>(p)[k]));
  else
    return double(static_cast<const T*>(p)[k]);
}

__device__ __forceinline__ double mean_of(const NormalizeGpuSample& s, int64_t g) {
  if (s.has_mean) return s.mean;
  return s.count > 0 ? s.sum[g] / s.count : 0.0;
}

template <typename In>
__global__ void sums_kernel(const NormalizeGpuSample* __restrict__ samples, bool squares) {
  const NormalizeGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < s.elements; k += step) {
    const int64_t g = group_of(s, k);
    const double x = load<In>(s.in, k);
    if (squares) {
      const double d = x - mean_of(s, g);
      atomicAdd(&s.sq[g], d * d);
    } else {
      atomicAdd(&s.sum[g], x);
    }
  }
}

template <typename Out>
__device__ __forceinline__ Out store(double v) {
  if constexpr (std::is_same_v<Out, float>) {
    return float(v);
  } else if constexpr (std::is_same_v<Out, __half>) {
    return __float2half_rn(float(v));
  } else {
    return to_int_saturated<Out>(double(v));
  }
}

template <typename In, typename Out>
__global__ void apply_kernel(const NormalizeGpuSample* __restrict__ samples, NormalizeGpuParams p) {
  const NormalizeGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < s.elements; k += step) {
    const int64_t g = group_of(s, k);
    double inv;
    if (s.has_stddev) {
      inv = 1.0 / sqrt(s.stddev * s.stddev + p.epsilon);
    } else {
      const double c = s.count - double(p.ddof);
      const double var = c > 0 ? s.sq[g] / c : 0.0;
      inv = var + p.epsilon > 0 ? 1.0 / sqrt(var + p.epsilon) : 0.0;
    }
    const double v = (load<In>(s.in, k) - mean_of(s, g)) * inv * p.scale + p.shift;
    static_cast<Out*>(s.out)[k] = store<Out>(v);
  }
}

template <typename In>
int run_in(const NormalizeGpuSample* samples, int n, dim3 grid, const NormalizeGpuParams& p,
           bool need_sum, bool need_sq, cudaStream_t st) {
  const int block = 256;
  if (need_sum) sums_kernel<In><<<grid, block, 0, st>>>(samples, false);
  if (need_sq) sums_kernel<In><<<grid, block, 0, st>>>(samples, true);
  switch (p.out_type) {
    case DType::kF32:
      apply_kernel<In, float><<<grid, block, 0, st>>>(samples, p);
      break;
    case DType::kF16:
      apply_kernel<In, __half><<<grid, block, 0, st>>>(samples, p);
      break;
    case DType::kU8:
      apply_kernel<In, uint8_t><<<grid, block, 0, st>>>(samples, p);
      break;
    case DType::kI8:
      apply_kernel<In, int8_t><<<grid, block, 0, st>>>(samples, p);
      break;
    case DType::kI16:
      apply_kernel<In, int16_t><<<grid, block, 0, st>>>(samples, p);
      break;
    case DType::kI32:
      apply_kernel<In, int32_t><<<grid, block, 0, st>>>(samples, p);
      break;
    default:
      return int(cudaErrorInvalidValue);
  }
  return int(cudaGetLastError());
}

}  // namespace

int normalize_gpu(const NormalizeGpuSample* samples, int n, int64_t max_elements,
                  const NormalizeGpuParams& p, StreamHandle stream) {
  if (n == 0 || max_elements == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  // Whether statistics are computed is the same for every sample (the operator's arguments);
  // the kernels read has_mean/has_stddev per sample anyway.
  const dim3 grid(unsigned(std::min<int64_t>((max_elements + 255) / 256, 1024)), unsigned(n));
  auto st = cudaStream_t(stream);
  switch (p.in_type) {
    case DType::kU8:
      return run_in<uint8_t>(samples, n, grid, p, true, true, st);
    case DType::kU16:
      return run_in<uint16_t>(samples, n, grid, p, true, true, st);
    case DType::kI16:
      return run_in<int16_t>(samples, n, grid, p, true, true, st);
    case DType::kI32:
      return run_in<int32_t>(samples, n, grid, p, true, true, st);
    case DType::kF16:
      return run_in<__half>(samples, n, grid, p, true, true, st);
    case DType::kF32:
      return run_in<float>(samples, n, grid, p, true, true, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
