// The DCT of mfcc (as DALI 2.4's CPU kernel): types I to IV as Wikipedia defines them
// (unscaled; DALI's type II has no factor 2, its type III halves x_0), optionally
// orthonormal (types II to IV), by a table of ndct x n cosines computed in double and stored in
// float, applied line by line with a float accumulator in input order; then the liftering
// of the first coefficients.
#pragma once

#include <cmath>
#include <cstdint>

namespace stoker::kernels {

// table[k * n + j]: the weight of input j in coefficient k, k < ndct. Type I needs n > 1 and
// is never normalised.
inline void dct_table(float* table, int64_t n, int64_t ndct, int type, bool normalize) {
  float* row = table;
  for (int64_t k = 0; k < ndct; ++k, row += n) {
    switch (type) {
      case 1: {
        const double phase = M_PI / double(n - 1);
        row[0] = 0.5f;
        for (int64_t j = 1; j < n - 1; ++j) row[j] = float(std::cos(phase * double(k) * double(j)));
        row[n - 1] = k % 2 == 0 ? 0.5f : -0.5f;
        break;
      }
      case 2: {
        const double phase = M_PI / double(n);
        double factor = 1;
        if (normalize) factor = k == 0 ? 1.0 / std::sqrt(double(n)) : std::sqrt(2.0 / double(n));
        for (int64_t j = 0; j < n; ++j) {
          row[j] = float(factor * std::cos(phase * (double(j) + 0.5) * double(k)));
        }
        break;
      }
      case 3: {
        const double phase = M_PI / double(n);
        const double first = normalize ? 1.0 / std::sqrt(double(n)) : 0.5;
        const double rest = normalize ? std::sqrt(2.0 / double(n)) : 1.0;
        row[0] = float(first);
        for (int64_t j = 1; j < n; ++j) {
          row[j] = float(rest * std::cos(phase * double(j) * (double(k) + 0.5)));
        }
        break;
      }
      default: {  // 4
        const double phase = M_PI / double(n);
        const double factor = normalize ? std::sqrt(2.0 / double(n)) : 1.0;
        for (int64_t j = 0; j < n; ++j) {
          row[j] = float(factor * std::cos(phase * (double(j) + 0.5) * (double(k) + 0.5)));
        }
      }
    }
  }
}

// DALI's liftering weights 1 + (lifter / 2) sin(pi (i + 1) / lifter), in float.
inline void lifter_coefficients(float* out, int64_t n, float lifter) {
  const float amplitude = lifter / 2;
  const float phase = float(M_PI) / lifter;
  for (int64_t i = 0; i < n; ++i) out[i] = 1.f + amplitude * std::sin(phase * float(i + 1));
}

// `in` (outer, n, inner) -> `out` (outer, ndct, inner), transformed along the middle axis;
// `lifter`: ndct weights, or null.
inline void dct_cpu(const float* in, int64_t outer, int64_t n, int64_t inner, const float* table,
                    int64_t ndct, const float* lifter, float* out) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* line = in + o * n * inner;
    float* dst = out + o * ndct * inner;
    for (int64_t j = 0; j < inner; ++j) {
      for (int64_t k = 0; k < ndct; ++k) {
        const float* row = table + k * n;
        float acc = 0.f;
        for (int64_t t = 0; t < n; ++t) acc += line[t * inner + j] * row[t];
        dst[k * inner + j] = lifter ? lifter[k] * acc : acc;
      }
    }
  }
}

}  // namespace stoker::kernels
