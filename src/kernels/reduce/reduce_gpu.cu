#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "stoker/kernels/reduce/reduce_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

// Only the pairs of types DALI has for a reduction are compiled.
template <Reduction R, typename In, typename Out>
constexpr bool kValid = reduce_pair_valid(R, dtype_of<In>, dtype_of<Out>);

template <typename T>
__device__ __forceinline__ T shfl_down(T v, int d) {
  if constexpr (sizeof(T) < 4) {
    return T(__shfl_down_sync(0xffffffffu, int32_t(v), d));
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return __shfl_down_sync(0xffffffffu, v, d);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return T(__shfl_down_sync(0xffffffffu, (long long)v, d));
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return T(__shfl_down_sync(0xffffffffu, (unsigned long long)v, d));
  } else {
    return __shfl_down_sync(0xffffffffu, v, d);
  }
}

// Pass 1: item = output * chunks + chunk, one warp each.
template <Reduction R, typename In, typename Out>
__device__ void fold_chunks(const ReduceGpuSample& s, int lane, int64_t warp, int64_t warps) {
  const ReducePlan& p = s.plan;
  const int64_t items = p.outputs * s.chunks;
  const In* in = static_cast<const In*>(s.in);
  for (int64_t item = warp; item < items; item += warps) {
    const int64_t o = item / s.chunks, c = item % s.chunks;
    const float m = s.mean ? s.mean[o * s.mean_stride] : 0.f;
    const In* x = in + reduce_output_base(p, o);
    const int64_t end = (c + 1) * s.chunk_len < p.count ? (c + 1) * s.chunk_len : p.count;
    Out acc = reduce_neutral<R, Out>();
    for (int64_t e = c * s.chunk_len + lane; e < end; e += 32)
      reduce_accumulate<R>(acc, x[reduce_element_offset(p, e)], m);
    for (int d = 16; d > 0; d >>= 1) reduce_combine<R>(acc, shfl_down(acc, d));
    if (lane == 0) static_cast<Out*>(s.partial)[item] = acc;
  }
}

template <typename In, typename Out>
__global__ void partial_kernel(const ReduceGpuSample* __restrict__ samples, Reduction r) {
  const ReduceGpuSample& s = samples[blockIdx.y];
  const int lane = int(threadIdx.x) & 31;
  const int64_t warp = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  visit_reduction(r, [&](auto k) {
    constexpr Reduction R = decltype(k)::value;
    if constexpr (kValid<R, In, Out>) fold_chunks<R, In, Out>(s, lane, warp, warps);
  });
}

// Pass 2: one thread per output element.
template <Reduction R, typename In, typename Out>
__device__ void finish_outputs(const ReduceGpuSample& s, int64_t first, int64_t step) {
  const ReducePlan& p = s.plan;
  const In* in = static_cast<const In*>(s.in);
  const Out* part = static_cast<const Out*>(s.partial);
  Out* out = static_cast<Out*>(s.out);
  for (int64_t o = first; o < p.outputs; o += step) {
    if (p.nred == 0) {
      const float m = s.mean ? s.mean[o * s.mean_stride] : 0.f;
      out[o] = reduce_finish<R>(reduce_single<R, Out>(in[reduce_output_base(p, o)], m), s.norm);
      continue;
    }
    Out acc = reduce_neutral<R, Out>();
    for (int64_t c = 0; c < s.chunks; ++c) reduce_combine<R>(acc, part[o * s.chunks + c]);
    out[o] = reduce_finish<R>(acc, s.norm);
  }
}

template <typename In, typename Out>
__global__ void finish_kernel(const ReduceGpuSample* __restrict__ samples, Reduction r) {
  const ReduceGpuSample& s = samples[blockIdx.y];
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  visit_reduction(r, [&](auto k) {
    constexpr Reduction R = decltype(k)::value;
    if constexpr (kValid<R, In, Out>) finish_outputs<R, In, Out>(s, first, step);
  });
}

template <typename In, typename Out>
int launch(Reduction r, const ReduceGpuSample* samples, int n, int64_t items, int64_t outputs,
           cudaStream_t st) {
  if (items > 0) {
    const dim3 grid(unsigned(std::clamp<int64_t>((items + kWarps - 1) / kWarps, 1, 4096)),
                    unsigned(n));
    partial_kernel<In, Out><<<grid, kBlock, 0, st>>>(samples, r);
  }
  const dim3 grid(unsigned(std::clamp<int64_t>((outputs + kBlock - 1) / kBlock, 1, 4096)),
                  unsigned(n));
  finish_kernel<In, Out><<<grid, kBlock, 0, st>>>(samples, r);
  return int(cudaGetLastError());
}

// The output types of input In (every reduction's, DALI 2.4's type map).
template <typename In>
int launch_in(Reduction r, DType out, const ReduceGpuSample* samples, int n, int64_t items,
              int64_t outputs, cudaStream_t st) {
  using Wide = std::conditional_t<std::is_signed_v<In>, int64_t, uint64_t>;
  if (out == dtype_of<In>) return launch<In, In>(r, samples, n, items, outputs, st);
  if constexpr (!std::is_same_v<In, float>) {
    if (out == DType::kF32) return launch<In, float>(r, samples, n, items, outputs, st);
    if constexpr (sizeof(In) < 8)
      if (out == dtype_of<Wide>) return launch<In, Wide>(r, samples, n, items, outputs, st);
  }
  return int(cudaErrorInvalidValue);
}

}  // namespace

int reduce_gpu(Reduction r, DType in, DType out, const ReduceGpuSample* samples, int n,
               int64_t items, int64_t outputs, StreamHandle stream) {
  if (n == 0 || outputs == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  auto st = cudaStream_t(stream);
  switch (in) {
    case DType::kU8:
      return launch_in<uint8_t>(r, out, samples, n, items, outputs, st);
    case DType::kI8:
      return launch_in<int8_t>(r, out, samples, n, items, outputs, st);
    case DType::kU16:
      return launch_in<uint16_t>(r, out, samples, n, items, outputs, st);
    case DType::kI16:
      return launch_in<int16_t>(r, out, samples, n, items, outputs, st);
    case DType::kU32:
      return launch_in<uint32_t>(r, out, samples, n, items, outputs, st);
    case DType::kI32:
      return launch_in<int32_t>(r, out, samples, n, items, outputs, st);
    case DType::kU64:
      return launch_in<uint64_t>(r, out, samples, n, items, outputs, st);
    case DType::kI64:
      return launch_in<int64_t>(r, out, samples, n, items, outputs, st);
    case DType::kF32:
      return launch_in<float>(r, out, samples, n, items, outputs, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
