// preemphasis_filter (as DALI 2.4's CPU kernel): y[t] = x[t] - coeff * x[t-1] over the
// sample's elements in memory order, x[-1] being 0 ("zero"), x[0] ("clamp") or x[1]
// ("reflect"). The arithmetic is C++'s for In - float * In: in float for every input type but
// float64 (in double); the result is converted to Out rounding half away from zero and
// saturating. coeff == 0 converts the input as it is.
#pragma once

#include <cstdint>
#include <type_traits>

#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

enum class PreemphasisBorder { kZero, kClamp, kReflect };

template <typename Out, typename In>
void preemphasis_cpu(const In* in, int64_t n, float coeff, PreemphasisBorder border, Out* out) {
  using Acc = std::conditional_t<std::is_same_v<In, double>, double, float>;
  if (coeff == 0.f) {
    for (int64_t t = 0; t < n; ++t) out[t] = cast_value<Out>(in[t]);
    return;
  }
  if (n == 0) return;
  if (border == PreemphasisBorder::kZero) {
    out[0] = cast_value<Out>(in[0]);
  } else {
    // A one-sample signal has no x[1]: reflect uses x[0] (DALI reads past the sample).
    const In edge = border == PreemphasisBorder::kReflect && n > 1 ? in[1] : in[0];
    out[0] = cast_value<Out>(Acc(in[0]) - Acc(coeff) * Acc(edge));
  }
  for (int64_t t = 1; t < n; ++t)
    out[t] = cast_value<Out>(Acc(in[t]) - Acc(coeff) * Acc(in[t - 1]));
}

}  // namespace stoker::kernels
