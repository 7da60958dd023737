#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cuda/std/limits>
#include <type_traits>

#include "stoker/kernels/tensor/cast_gpu.hpp"

namespace stoker::kernels {
namespace {

// 16-bit floats as their bits (stoker's float16/bfloat16 are host types); converted with
// CUDA's round-to-nearest-even intrinsics, as the host types convert.
struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;

__device__ float as_float(F16 v) {
  __half_raw r;
  r.x = v.bits;
  return __half2float(__half(r));
}
__device__ float as_float(BF16 v) {
  __nv_bfloat16_raw r;
  r.x = v.bits;
  return __bfloat162float(__nv_bfloat16(r));
}
template <typename T>
__device__ T from_float(float f) {
  if constexpr (std::is_same_v<T, F16>) {
    return F16{__half_raw(__float2half_rn(f)).x};
  } else {
    return BF16{__nv_bfloat16_raw(__float2bfloat16_rn(f)).x};
  }
}

// cast_value (core/dtype.hpp), branch for branch; with `slice`, slice_cast.
template <typename Out, typename In>
__device__ Out cast_one(In v, bool slice) {
  if constexpr (std::is_same_v<Out, bool>) {
    if constexpr (is_half_v<In>) {
      return as_float(v) != 0.f;
    } else {
      return v != In(0);
    }
  } else if constexpr (is_half_v<Out>) {
    float f = 0.f;
    if constexpr (is_half_v<In>) {
      f = as_float(v);
    } else {
      f = float(v);
    }
    if (slice && std::is_same_v<Out, F16>) f = f > 65504.f ? 65504.f : f < -65504.f ? -65504.f : f;
    return from_float<Out>(f);
  } else if constexpr (std::is_floating_point_v<Out>) {
    if constexpr (is_half_v<In>) {
      return Out(as_float(v));
    } else {
      return Out(v);
    }
  } else if constexpr (std::is_integral_v<In>) {
    using L = cuda::std::numeric_limits<Out>;
    if constexpr (std::is_signed_v<In>) {
      if (v < 0 && (!std::is_signed_v<Out> || int64_t(v) < int64_t(L::min()))) return L::min();
    }
    if (v > 0 && uint64_t(v) > uint64_t(L::max())) return L::max();
    return Out(v);
  } else {
    using L = cuda::std::numeric_limits<Out>;
    double d = 0;
    if constexpr (is_half_v<In>) {
      d = double(as_float(v));
    } else {
      d = double(v);
    }
    if (!(d == d)) return Out(0);
    const double r = slice ? trunc(d) : round(d);
    // The bounds as doubles: exact for the minima; the maxima of 64-bit types round up to
    // 2^63 / 2^64, which no value below them reaches (the host compares in long double).
    if (r <= double(L::min())) return L::min();
    if (r >= double(L::max())) return L::max();
    return Out(r);
  }
}

template <typename In, typename Out>
__global__ void cast_kernel(const CastGpuSample* __restrict__ samples, bool slice) {
  const CastGpuSample& s = samples[blockIdx.y];
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s.count; i += step)
    out[i] = cast_one<Out>(in[i], slice);
}

// Calls f(T{}) with the device storage type of `d`.
template <typename F>
bool visit_device_type(DType d, F&& f) {
  switch (d) {
    case DType::kBool:
      return f(bool{}), true;
    case DType::kU8:
      return f(uint8_t{}), true;
    case DType::kU16:
      return f(uint16_t{}), true;
    case DType::kU32:
      return f(uint32_t{}), true;
    case DType::kU64:
      return f(uint64_t{}), true;
    case DType::kI8:
      return f(int8_t{}), true;
    case DType::kI16:
      return f(int16_t{}), true;
    case DType::kI32:
      return f(int32_t{}), true;
    case DType::kI64:
      return f(int64_t{}), true;
    case DType::kF16:
      return f(F16{}), true;
    case DType::kBF16:
      return f(BF16{}), true;
    case DType::kF32:
      return f(float{}), true;
    case DType::kF64:
      return f(double{}), true;
    default:
      return false;
  }
}

}  // namespace

int cast_gpu(const CastGpuSample* samples, int n, int64_t max_count, DType in, DType out,
             StreamHandle stream, CastRule rule) {
  if (n == 0 || max_count == 0) return 0;
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_count + block - 1) / block, 2048)), unsigned(n));
  bool known = false;
  visit_device_type(in, [&](auto i) {
    known = visit_device_type(out, [&](auto o) {
      cast_kernel<decltype(i), decltype(o)>
          <<<grid, block, 0, cudaStream_t(stream)>>>(samples, rule == CastRule::kSlice);
    });
  });
  return known ? int(cudaGetLastError()) : int(cudaErrorInvalidValue);
}

}  // namespace stoker::kernels
