// Values computed in float or double stored as an integer output type on the GPU, by the
// host's rules (core/dtype.hpp: convert_sat, cast_value): rounded half away from zero,
// saturated to the type's range, NaN to 0. One definition for every
// kernel, so that the backends cannot drift apart. (cast_gpu.cu keeps its own for the 64-bit
// types, whose maxima are not doubles.)
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace stoker::kernels {

// The range of an integer output type of up to 32 bits, as doubles (exact); computed here
// because std::numeric_limits is host-only without --expt-relaxed-constexpr.
template <typename T>
struct IntRange {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 4);
  static constexpr int kBits = int(8 * sizeof(T));
  static constexpr double lo = std::is_signed_v<T> ? -double(1ull << (kBits - 1)) : 0.0;
  static constexpr double hi =
      double(std::is_signed_v<T> ? (1ull << (kBits - 1)) - 1 : (1ull << kBits) - 1);
};

// x rounded half away from zero and clamped to [lo, hi]; NaN gives 0.
template <typename F>
__device__ __forceinline__ F round_saturate(F x, F lo, F hi) {
  static_assert(std::is_floating_point_v<F>);
  if (!(x == x)) return F(0);
  F r;
  if constexpr (std::is_same_v<F, float>) {
    r = roundf(x);
  } else {
    r = round(x);
  }
  return r <= lo ? lo : r >= hi ? hi : r;
}

// x (float or double) as the integer type T.
template <typename T, typename F>
__device__ __forceinline__ T to_int_saturated(F x) {
  return T(round_saturate<F>(x, F(IntRange<T>::lo), F(IntRange<T>::hi)));
}

// A value computed in float as the output type T: float as it is, __half rounded to nearest
// even, integers as to_int_saturated.
template <typename T>
__device__ __forceinline__ T store_float(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return to_int_saturated<T>(v);
  }
}

}  // namespace stoker::kernels
