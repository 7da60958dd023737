// laplacian.hpp's float work, kept out of the header so that one translation unit decides how it
// rounds: a product then a sum, as DALI's kernel compiled for plain x86-64 (never contracted
// into fused multiply-adds, whatever flags a user builds with).
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <array>

#include "stoker/kernels/filter/border.hpp"
#include "stoker/kernels/filter/laplacian.hpp"
#include "stoker/kernels/filter/laplacian_gpu.hpp"

namespace stoker::kernels {
namespace {

// Windows of sizes 1..31 (index size / 2), by DALI's recurrence in float.
struct WindowTable {
  static constexpr int kCount = kLaplacianMaxWindow / 2 + 1;
  std::array<std::array<float, kLaplacianMaxWindow>, kCount> smooth{}, deriv{};

  WindowTable() {
    // Smoothing: each size from the previous one by pairwise sums ([1, 1] composed once more).
    std::vector<float> s{1.f};
    smooth[0][0] = 1.f;
    std::vector<std::vector<float>> by_size(kLaplacianMaxWindow + 1);
    by_size[1] = s;
    for (int size = 2; size <= kLaplacianMaxWindow; ++size) {
      std::vector<float> next(static_cast<size_t>(size));
      next[0] = s[0];
      for (int j = 1; j < size - 1; ++j) next[size_t(j)] = s[size_t(j - 1)] + s[size_t(j)];
      next[size_t(size - 1)] = s[size_t(size - 2)];
      s = next;
      by_size[size_t(size)] = s;
      if (size % 2) std::copy(s.begin(), s.end(), smooth[size_t(size / 2)].begin());
    }
    deriv[0][0] = 1.f;
    // Derivative of size n: the smoothing window of n - 2 differenced twice ([-1, 1] each time).
    for (int size = 3; size <= kLaplacianMaxWindow; size += 2) {
      std::vector<float> d = by_size[size_t(size - 2)];
      for (int step = 0; step < 2; ++step) {
        std::vector<float> next(d.size() + 1);
        next[0] = -d[0];
        for (size_t j = 1; j < d.size(); ++j) next[j] = d[j - 1] - d[j];
        next[d.size()] = d.back();
        d = next;
      }
      std::copy(d.begin(), d.end(), deriv[size_t(size / 2)].begin());
    }
  }
};

}  // namespace

const float* laplacian_window(bool derivative, int size) {
  static const WindowTable table;
  const auto& t = derivative ? table.deriv : table.smooth;
  return t[size_t(size / 2)].data();
}

void laplacian_window_table(float* table) {
  constexpr int kSizes = kLaplacianMaxWindow / 2 + 1;
  for (int kind = 0; kind < 2; ++kind)
    for (int k = 0; k < kSizes; ++k) {
      const int size = 2 * k + 1;
      const float* w = laplacian_window(kind == 1, size);
      float* dst = table + (kind * kSizes + k) * kLaplacianWindowSlots;
      for (int t = 0; t < kLaplacianWindowSlots; ++t) dst[t] = t < size ? w[t] : 0.f;
    }
}

void laplacian_pass(const float* src, float* dst, int64_t outer, int64_t n, int64_t inner,
                    const float* w, int taps, bool half, bool round_out) {
  const int64_t r = taps / 2;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t x = 0; x < n; ++x) {
      float* d = dst + (o * n + x) * inner;
      for (int64_t e = 0; e < inner; ++e) d[e] = 0.f;
      for (int k = 0; k < taps; ++k) {
        const float wk = w[k];
        const float* s = src + (o * n + reflect101(x - r + k, n)) * inner;
        if (half)
          for (int64_t e = 0; e < inner; ++e) d[e] = d[e] + half_round_away(s[e] * wk);
        else
          for (int64_t e = 0; e < inner; ++e) d[e] = d[e] + s[e] * wk;
      }
      if (round_out)
        for (int64_t e = 0; e < inner; ++e) d[e] = half_round_away(d[e]);
    }
}

void laplacian_accumulate(float* acc, const float* v, float scale, int64_t count, bool first,
                          bool round_half) {
  if (first) {
    for (int64_t e = 0; e < count; ++e) acc[e] = v[e] * scale;
  } else {
    for (int64_t e = 0; e < count; ++e) acc[e] = v[e] * scale + acc[e];
  }
  if (round_half)
    for (int64_t e = 0; e < count; ++e) acc[e] = half_round_away(acc[e]);
}

const float* laplacian_partial(const float* plane, float* out, float* tmp, const LaplacianShape& s,
                               int i) {
  const float* src = plane;
  float* bufs[2] = {out, tmp};
  int next = 0;
  // float16: DALI's separable passes keep their intermediates in float16; its last pass (axis
  // 0) and the single pass of a partial without smoothing go to the scale unrounded.
  const bool round_between = s.half && !laplacian_single_pass(s, i);
  for (int a = s.axes - 1; a >= 0; --a) {
    const int taps = s.window[i][a];
    if (taps == 1) continue;  // the identity
    int64_t outer = 1, inner = s.channels;
    for (int j = 0; j < a; ++j) outer *= s.extent[j];
    for (int j = a + 1; j < s.axes; ++j) inner *= s.extent[j];
    float* dst = bufs[next];
    next ^= 1;
    laplacian_pass(src, dst, outer, s.extent[a], inner, laplacian_window(a == i, taps), taps,
                   s.half, round_between && a != 0);
    src = dst;
  }
  return src;
}

}  // namespace stoker::kernels
