#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/signal/nonsilent_region_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kPowerThreads = 128;
constexpr int kFindThreads = 512;
constexpr int64_t kMaxGridX = 4096;

template <typename T>
constexpr bool kExact = std::is_integral_v<T> && sizeof(T) <= 2;

// moving_mean_square's square: exact in int64, or of the value as a float.
template <typename T>
__device__ __forceinline__ auto square(T v) {
  if constexpr (kExact<T>) {
    const int64_t a = int64_t(v);
    return a * a;
  } else {
    const float a = float(v);
    return __fmul_rn(a, a);
  }
}

__device__ __forceinline__ int64_t add(int64_t a, int64_t b) { return a + b; }
__device__ __forceinline__ int64_t sub(int64_t a, int64_t b) { return a - b; }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }

// Thread k of sample blockIdx.y runs segments k, k + stride, ...: moving_mean_square's loop over
// one of its blocks, from the sum of the window ending at the segment's first sample.
template <typename T>
__global__ void power(const NonsilentGpuSample* samples) {
  using Acc = std::conditional_t<kExact<T>, int64_t, float>;
  const NonsilentGpuSample& s = samples[blockIdx.y];
  const T* in = static_cast<const T*>(s.in);
  const int64_t n = s.length, window = s.window, segments = (n + s.segment - 1) / s.segment;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < segments;
       k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t start = k * s.segment;
    const int64_t end = start + s.segment < n ? start + s.segment : n;
    Acc sum = 0;
    for (int64_t i = start - window + 1 > 0 ? start - window + 1 : 0; i <= start; ++i)
      sum = add(sum, square(in[i]));
    s.power[start] = __fmul_rn(float(sum), s.mean_factor);
    for (int64_t i = start + 1; i < end; ++i) {
      // The sample leaving the window first, then the one entering (the CPU's order).
      if (i >= window) sum = sub(sum, square(in[i - window]));
      sum = add(sum, square(in[i]));
      s.power[i] = __fmul_rn(float(sum), s.mean_factor);
    }
  }
}

// One block per sample: the reference, the threshold, the first and last loud samples.
__global__ void find_region(const NonsilentGpuSample* samples, bool has_reference, float reference,
                            float factor) {
  __shared__ float top[kFindThreads];
  __shared__ int64_t lo[kFindThreads], hi[kFindThreads];
  const NonsilentGpuSample& s = samples[blockIdx.x];
  const int64_t n = s.length;
  const float* p = s.power;
  const int t = threadIdx.x;
  if (n == 0) {
    if (t == 0) *s.begin = 0, *s.region_length = 0;
    return;
  }
  float ref = reference;
  if (!has_reference) {
    // power_max: std::max from p[0] on keeps the larger of two numbers and passes NaNs over,
    // unless p[0] is one. Over numbers the maximum is the same in any order.
    float m = -INFINITY;
    for (int64_t i = t; i < n; i += blockDim.x) {
      const float v = p[i];
      if (m < v) m = v;
    }
    top[t] = m;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (t < half && top[t] < top[t + half]) top[t] = top[t + half];
      __syncthreads();
    }
    ref = p[0] != p[0] ? p[0] : top[0];
  }
  const float threshold = __fmul_rn(ref, factor);
  int64_t first = n, last = -1;
  for (int64_t i = t; i < n; i += blockDim.x) {
    if (p[i] >= threshold) {
      if (first == n) first = i;
      last = i;
    }
  }
  lo[t] = first, hi[t] = last;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) {
      if (lo[t + half] < lo[t]) lo[t] = lo[t + half];
      if (hi[t + half] > hi[t]) hi[t] = hi[t + half];
    }
    __syncthreads();
  }
  if (t != 0) return;
  int64_t begin = lo[0], length = 0;
  if (begin == n) {
    begin = 0;
  } else {
    length = hi[0] - begin + 1;
    if (begin != 0) {
      const int64_t moved = begin - (s.window - 1) > 0 ? begin - (s.window - 1) : 0;
      length += begin - moved;
      begin = moved;
    }
  }
  *s.begin = int32_t(begin);
  *s.region_length = int32_t(length);
}

}  // namespace

int nonsilent_region_gpu(const NonsilentGpuSample* samples, int n, int64_t max_segments, DType in,
                         bool has_reference, float reference, float factor, StreamHandle stream) {
  if (n == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (max_segments > 0) {
    int64_t blocks = (max_segments + kPowerThreads - 1) / kPowerThreads;
    blocks = blocks < kMaxGridX ? blocks : kMaxGridX;
    const dim3 grid{unsigned(blocks), unsigned(n)};
    const bool known = visit_types<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32,
                                   DType::kI32, DType::kU64, DType::kI64, DType::kF32>(
        in, [&](auto tag) { power<decltype(tag)><<<grid, kPowerThreads, 0, st>>>(samples); });
    if (!known) return int(cudaErrorInvalidValue);
  }
  find_region<<<unsigned(n), kFindThreads, 0, st>>>(samples, has_reference, reference, factor);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
