// CPU features the SIMD paths check once at run time.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

namespace stoker {

// F16C (float <-> half conversions) with the OS saving AVX state. Through cpuid rather than
// __builtin_cpu_supports("f16c"), which clang (14) refuses to compile; F16C's instructions are
// VEX-encoded, so they need what __builtin_cpu_supports("avx") checks too.
inline bool cpu_has_f16c() {
#if defined(__x86_64__) && defined(__GNUC__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
#else
  return false;
#endif
}

}  // namespace stoker
