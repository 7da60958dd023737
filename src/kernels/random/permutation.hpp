// Random orders of a batch's samples (batch_permutation), as DALI draws them: a uniform
// permutation (Fisher-Yates), a permutation without fixed points made by Sattolo's algorithm
// (DALI's random_derangement: a uniformly chosen single cycle through all n samples, not a
// uniform derangement), and draws with repetition, optionally never i at position i.
// `Rng` has below(n): a uniform integer in [0, n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace stoker::kernels {

template <typename Rng>
std::vector<int32_t> random_permutation(int n, bool no_fixed_points, Rng& rng) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), 0);
  if (no_fixed_points && n > 1) {
    for (int i = 0; i < n - 1; ++i)  // swap with a later position only: one n-cycle
      std::swap(out[size_t(i)], out[size_t(i + 1) + rng.below(uint32_t(n - 1 - i))]);
  } else {
    for (int i = n - 1; i > 0; --i) std::swap(out[size_t(i)], out[rng.below(uint32_t(i + 1))]);
  }
  return out;
}

template <typename Rng>
std::vector<int32_t> random_indices(int n, bool no_fixed_points, Rng& rng) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (no_fixed_points && n > 1) {
      const auto x = int32_t(rng.below(uint32_t(n - 1)));  // [0, n) without i
      out[size_t(i)] = x + (x >= i ? 1 : 0);
    } else {
      out[size_t(i)] = int32_t(rng.below(uint32_t(n)));
    }
  }
  return out;
}

}  // namespace stoker::kernels
