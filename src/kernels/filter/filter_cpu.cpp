#include <cmath>

#include "stoker/kernels/filter/filter.hpp"

// DALI's results depend on which sums are fused (filter.hpp): the plain ones must stay a product
// and a sum whatever the build's target.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace stoker::kernels {
namespace {

// The products and sums rounded separately. This file is built for baseline x86-64, which has no
// FMA instruction for the compiler to contract them into.
void accumulate_plain(float* acc, const float* src, float w, int64_t from, int64_t n) {
  for (int64_t e = from; e < n; ++e) acc[e] = acc[e] + src[e] * w;
}

void accumulate_fused_generic(float* acc, const float* src, float w, int64_t n) {
  for (int64_t e = 0; e < n; ++e) acc[e] = std::fma(src[e], w, acc[e]);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same with the FMA instructions (vectorised by the compiler): libm's fmaf is exact but a
// call per value on a baseline build.
__attribute__((target("avx2,fma"))) void accumulate_fused_fma(float* acc, const float* src, float w,
                                                              int64_t n) {
  for (int64_t e = 0; e < n; ++e) acc[e] = __builtin_fmaf(src[e], w, acc[e]);
}

bool cpu_has_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

}  // namespace

void filter_accumulate(float* acc, const float* src, float w, int64_t n, int64_t fused) {
  const int64_t f = fused < n ? fused : n;
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_has_fma())
    accumulate_fused_fma(acc, src, w, f);
  else
    accumulate_fused_generic(acc, src, w, f);
#else
  accumulate_fused_generic(acc, src, w, f);
#endif
  accumulate_plain(acc, src, w, f, n);
}

}  // namespace stoker::kernels
