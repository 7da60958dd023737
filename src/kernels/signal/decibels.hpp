// to_decibels (as DALI 2.4's CPU kernel, in its float steps): multiplier * log10(max(min_ratio,
// x / reference)), min_ratio = 10^(cutoff_db / multiplier), computed as a multiple of log2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace stoker::kernels {

struct Decibels {
  float multiplier = 10.f;
  float reference = 0.f;  // 0: the sample's maximum (not below 0)
  float cutoff_db = -200.f;
};

// The largest value of x[0, n) above 0, or 0 (NaNs are passed over, as DALI's loop does).
inline float positive_max(const float* x, int64_t n) {
  float m = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > m) m = x[i];
  }
  return m;
}

// The smallest ratio to the reference, 10^(cutoff_db / multiplier) (never 0).
inline float decibels_min_ratio(const Decibels& d) {
  const float min_ratio = std::pow(10.f, d.cutoff_db / d.multiplier);
  return min_ratio == 0.f ? std::numeric_limits<float>::denorm_min() : min_ratio;
}

// multiplier * log10(x) is decibels_mul_log2(d) * log2(x).
inline float decibels_mul_log2(const Decibels& d) {
  return d.multiplier * 0.3010299956639812f;  // log10(2)
}

inline void to_decibels_cpu(const float* in, int64_t n, const Decibels& d, float* out) {
  const float reference = d.reference != 0.f ? d.reference : positive_max(in, n);
  const float min_ratio = decibels_min_ratio(d);
  const float mul_log2 = decibels_mul_log2(d);
  // A zero maximum gives x * inf: NaN or inf, and NaN loses to min_ratio in std::max (DALI's
  // all-zero sample is at the cut-off).
  const float inv_reference = reference == 1.f ? 1.f : 1.f / reference;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = mul_log2 * std::log2(std::max(min_ratio, in[i] * inv_reference));
  }
}

}  // namespace stoker::kernels
