// one_hot: a sample seen as outer x inner labels becomes outer x classes x inner values, `on`
// where the class is the label's and `off` elsewhere (the new axis sits between outer and inner).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

// The dtypes DALI's one_hot reads and writes (no bool, no 16-bit floats).
template <typename F>
decltype(auto) visit_one_hot(DType d, std::string_view what, F&& f) {
  return visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                     DType::kU64, DType::kI64, DType::kF32, DType::kF64>(d, what,
                                                                         std::forward<F>(f));
}

// The class a label names, as DALI reads it (`int cls = label`): integers keep their low 32
// bits (two's complement), floats truncate toward zero. A float beyond int32's range, or NaN,
// names no class (-1), as x86's conversion of it gives INT_MIN, which no class has.
template <typename In>
STOKER_HOST_DEVICE inline int64_t one_hot_class(In v) {
  if constexpr (std::is_floating_point_v<In>) {
    if (!(v > In(-2147483649.0) && v < In(2147483648.0))) return -1;
    return int64_t(int32_t(v));
  } else {
    return int64_t(int32_t(v));
  }
}

// DALI's on_value and off_value (float32 arguments) in the output type, as C++ converts them
// there on x86: floats as they are; integers truncated toward zero, wrapping outside the type's
// range (300 to uint8 is 44).
template <typename Out>
Out one_hot_value(double v) {
  const float f = float(v);
  if constexpr (std::is_floating_point_v<Out>) {
    return Out(f);
  } else {
    if (f >= 0.f && f < 18446744073709551616.f) return Out(uint64_t(f));
    if (f < 0.f && f >= -9223372036854775808.f) return Out(int64_t(f));
    return Out(0);
  }
}

template <typename Out, typename In>
void one_hot_cpu(Out* out, const In* in, int64_t outer, int64_t classes, int64_t inner, Out on,
                 Out off) {
  std::fill(out, out + outer * classes * inner, off);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t c = one_hot_class(in[o * inner + i]);
      if (c >= 0 && c < classes) out[(o * classes + c) * inner + i] = on;
    }
}

// The GPU's: one launch for a batch of per-sample descriptors (a device array of n); `on_bits`
// and `off_bits` hold the values already in the output type (one_hot_value), in their low
// bytes. Input and output dtypes: the integers and float32/float64.
struct OneHotGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t outer = 0, inner = 0;
};
int one_hot_gpu(const OneHotGpuSample* samples, int n, int64_t max_count, int64_t classes, DType in,
                DType out, uint64_t on_bits, uint64_t off_bits, StreamHandle stream);

}  // namespace stoker::kernels
