// float16 samples in device kernels: stoker's float16 is a host type, so kernels see its bits
// and read them through cuda_fp16's conversion. One definition for the filters' kernels.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace stoker::kernels {

struct HalfBits {
  uint16_t bits;
};

// p[i] as float, for float16 (HalfBits) and every arithmetic type.
template <typename T>
__device__ __forceinline__ float load_as_float(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, HalfBits>) {
    __half_raw r;
    r.x = p[i].bits;
    return __half2float(__half(r));
  } else {
    return float(p[i]);
  }
}

}  // namespace stoker::kernels
