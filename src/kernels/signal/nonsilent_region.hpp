// nonsilent_region (as DALI 2.4's CPU kernel). The short-term power p[i] is the mean square of
// the `window` samples ending at i (fewer at the start, still divided by `window`); the
// region runs from the first to the last i where p[i] >= reference * 10^(cutoff_db / 10), the
// reference being max(p) unless given. A region that does not start at 0 is moved back by
// window - 1 samples (at most to 0), as its first loud sample may be anywhere in that window;
// its end is not moved. No loud sample: (0, 0).
//
// The running sum is DALI's: exact in int64 for 8- and 16-bit integers; in float otherwise,
// recomputed from scratch at every multiple of `reset_interval` (-1: never), so that the
// float drift after loud passages (which decides where a region ends) is the same.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace stoker::kernels {

template <typename T>
inline constexpr bool kExactMeanSquare = std::is_integral_v<T> && sizeof(T) <= 2;

// Float signals: from block b on, whole blocks eight at a time with AVX2 where the CPU has it
// (nonsilent_region_cpu.cpp: moving_mean_square's values bit for bit, 2x faster than its
// generic loop); returns the first block left to do (b without AVX2). The blocks start a
// window in (b * block >= window - 1).
int64_t mean_square_blocks_avx2(const float* in, int64_t n, int64_t window, int64_t block,
                                int64_t b, float* out);

// p[0, n) of `in` (window >= 1). `simd`: the AVX2 loop for float signals (tests turn it off).
template <typename T>
void moving_mean_square(const T* in, int64_t n, int64_t window, int64_t reset_interval,
                        float* out, bool simd = true) {
  using Acc = std::conditional_t<kExactMeanSquare<T>, int64_t, float>;
  const auto square = [](T v) {
    const Acc a = Acc(v);
    return a * a;
  };
  const float mean_factor = 1.f / float(window);
  const int64_t block = kExactMeanSquare<T> || reset_interval < 0 ? n : reset_interval;
  // One block: the sum over the window ending at `start` from scratch, then running.
  const auto run_block = [&](int64_t start) {
    Acc sum = 0;
    for (int64_t i = std::max<int64_t>(start - window + 1, 0); i <= start; ++i)
      sum += square(in[i]);
    out[start] = float(sum) * mean_factor;
    const int64_t end = std::min(n, start + block);
    for (int64_t i = start + 1; i < end; ++i) {
      // The sample leaving the window first, then the one entering (DALI 2.4's order, which
      // decides the float drift's sign after a loud passage).
      if (i >= window) sum -= square(in[i - window]);
      sum += square(in[i]);
      out[i] = float(sum) * mean_factor;
    }
  };
  // Blocks that start a whole window in and run their full length go eight at a time: eight
  // independent sums advance together (the same operations in the same order for each, so the
  // same values), where one sum's chain of dependent additions would wait on each other. The
  // squares come through a small tile: eight streams a block apart (a multiple of 4 KiB) would
  // share an L1 cache set and evict each other.
  constexpr int kLanes = 8, kChunk = 64;
  const int64_t blocks = (n + block - 1) / block;
  int64_t b = 0;
  if (block < n) {
    while (b < blocks && b * block < window - 1) run_block(b++ * block);  // windows cut at 0
    if constexpr (std::is_same_v<T, float>)
      if (simd) b = mean_square_blocks_avx2(in, n, window, block, b, out);
    for (; (b + kLanes) * block <= n; b += kLanes) {
      Acc sum[kLanes] = {}, enter[kLanes][kChunk], leave[kLanes][kChunk];
      float result[kLanes][kChunk];
      const T* src = in + b * block;
      float* dst = out + b * block;
      // The window before each block's first sample, in ascending order.
      for (int64_t j0 = 1 - window; j0 <= 0; j0 += kChunk) {
        const int c = int(std::min<int64_t>(kChunk, 1 - j0));
        for (int l = 0; l < kLanes; ++l)
          for (int k = 0; k < c; ++k) enter[l][k] = square(src[l * block + j0 + k]);
        for (int k = 0; k < c; ++k) {
#pragma GCC unroll 8
          for (int l = 0; l < kLanes; ++l) sum[l] += enter[l][k];
        }
      }
      for (int l = 0; l < kLanes; ++l) dst[l * block] = float(sum[l]) * mean_factor;
      for (int64_t k0 = 1; k0 < block; k0 += kChunk) {
        const int c = int(std::min<int64_t>(kChunk, block - k0));
        for (int l = 0; l < kLanes; ++l) {
          for (int k = 0; k < c; ++k) leave[l][k] = square(src[l * block + k0 + k - window]);
          for (int k = 0; k < c; ++k) enter[l][k] = square(src[l * block + k0 + k]);
        }
        for (int k = 0; k < c; ++k) {
#pragma GCC unroll 8
          for (int l = 0; l < kLanes; ++l) {
            sum[l] -= leave[l][k];
            sum[l] += enter[l][k];
            result[l][k] = float(sum[l]) * mean_factor;
          }
        }
        for (int l = 0; l < kLanes; ++l)
          for (int k = 0; k < c; ++k) dst[l * block + k0 + k] = result[l][k];
      }
    }
  }
  for (; b < blocks; ++b) run_block(b * block);
}

// (begin, length) of the region of p[0, n) at or above `threshold`, moved back by window - 1.
inline std::pair<int64_t, int64_t> nonsilent_bounds(const float* power, int64_t n, float threshold,
                                                    int64_t window) {
  int64_t begin = 0;
  while (begin < n && !(power[begin] >= threshold)) ++begin;
  if (begin == n) return {0, 0};
  int64_t last = n - 1;
  while (!(power[last] >= threshold)) --last;
  int64_t length = last - begin + 1;
  if (begin != 0) {
    const int64_t moved = std::max<int64_t>(begin - (window - 1), 0);
    length += begin - moved;
    begin = moved;
  }
  return {begin, length};
}

// The threshold for a cut-off in dB against `reference` (DALI's float steps).
inline float nonsilent_threshold(float reference, float cutoff_db) {
  return reference * std::pow(10.f, cutoff_db * (1.f / 10.f));
}

// max(p) (DALI's: the first value, then larger ones; a NaN first stays, later ones are passed
// over), n >= 1. `simd`: eight at a time with AVX2 when no value is NaN (the same result).
float power_max(const float* p, int64_t n, bool simd = true);

}  // namespace stoker::kernels
