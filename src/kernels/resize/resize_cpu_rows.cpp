#include "stoker/kernels/resize/resize_cpu.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>

// Every loop here adds w * s tap by tap, in order, starting from 0, as resize_cpu's generic
// loops do, and never fuses the multiply and the add (no FMA: AVX2 alone), so that the same
// floats come out on every path (taps past a pixel's count have weight 0 and read a real or
// padding value: adding 0 * s changes nothing). resize_cpu_test compares them bit for bit.

namespace stoker::kernels::resize_detail {

int64_t rgb8_scratch_floats(const ResampleWeights& wx, int64_t width) {
  const int64_t pairs = (wx.out_size + 1) / 2;
  return pairs * wx.support * 8 + (width + wx.support) * 3 + 1;
}

#if defined(__SSE2__)
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define STOKER_HAS_AVX2_PATH 1
bool use_avx2 = __builtin_cpu_supports("avx2");  // tests turn it off (allow_avx2) to check SSE2
#endif

// The source row as floats (each source pixel feeds a few taps: converting it once is cheaper
// than per tap), then `support` zero pixels and a float, so that every tap of every output pixel
// may load four floats without a bound check.
void row_to_floats_sse2(const uint8_t* src, int64_t len, float* row) {
  const __m128i zero = _mm_setzero_si128();
  int64_t i = 0;
  for (; i + 16 <= len; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i lo = _mm_unpacklo_epi8(b, zero), hi = _mm_unpackhi_epi8(b, zero);
    _mm_storeu_ps(row + i, _mm_cvtepi32_ps(_mm_unpacklo_epi16(lo, zero)));
    _mm_storeu_ps(row + i + 4, _mm_cvtepi32_ps(_mm_unpackhi_epi16(lo, zero)));
    _mm_storeu_ps(row + i + 8, _mm_cvtepi32_ps(_mm_unpacklo_epi16(hi, zero)));
    _mm_storeu_ps(row + i + 12, _mm_cvtepi32_ps(_mm_unpackhi_epi16(hi, zero)));
  }
  for (; i < len; ++i) row[i] = float(src[i]);
}

// Output pixels x (taps from `wt`, the pair table's half for x) into dst + x * 3, four floats
// (the fourth is overwritten by the next pixel, or lands in the room the caller leaves).
void horizontal_rgb8_sse2(const float* row, float* dst, const ResampleWeights& wx,
                          const float* table) {
  const int64_t n = wx.out_size;
  const int support = wx.support;
  auto weight = [&](int64_t x, int k) {
    return _mm_loadu_ps(table + ((x / 2) * support + k) * 8 + (x % 2) * 4);
  };
  auto tap = [&](int64_t x, int k) {
    return _mm_mul_ps(weight(x, k), _mm_loadu_ps(row + (wx.first[size_t(x)] + k) * 3));
  };
  int64_t x = 0;
  // Four output pixels at a time: four independent sums hide the add's latency.
  for (; x + 4 <= n; x += 4) {
    int taps = 0;
    for (int64_t j = x; j < x + 4; ++j) taps = std::max(taps, wx.count[size_t(j)]);
    __m128 a0 = _mm_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < taps; ++k) {
      a0 = _mm_add_ps(a0, tap(x, k));
      a1 = _mm_add_ps(a1, tap(x + 1, k));
      a2 = _mm_add_ps(a2, tap(x + 2, k));
      a3 = _mm_add_ps(a3, tap(x + 3, k));
    }
    _mm_storeu_ps(dst + x * 3, a0);
    _mm_storeu_ps(dst + x * 3 + 3, a1);
    _mm_storeu_ps(dst + x * 3 + 6, a2);
    _mm_storeu_ps(dst + x * 3 + 9, a3);
  }
  for (; x < n; ++x) {
    __m128 a = _mm_setzero_ps();
    for (int k = 0; k < wx.count[size_t(x)]; ++k) a = _mm_add_ps(a, tap(x, k));
    _mm_storeu_ps(dst + x * 3, a);
  }
}

void vertical_sse2(const float* src, int64_t stride, const float* w, int n, float* acc,
                   int64_t len) {
  int64_t i = 0;
  for (; i + 8 <= len; i += 8) {
    __m128 a0 = _mm_setzero_ps(), a1 = a0;
    for (int k = 0; k < n; ++k) {
      const __m128 wk = _mm_set1_ps(w[k]);
      a0 = _mm_add_ps(a0, _mm_mul_ps(wk, _mm_loadu_ps(src + k * stride + i)));
      a1 = _mm_add_ps(a1, _mm_mul_ps(wk, _mm_loadu_ps(src + k * stride + i + 4)));
    }
    _mm_storeu_ps(acc + i, a0);
    _mm_storeu_ps(acc + i + 4, a1);
  }
  for (; i < len; ++i) {
    float a = 0.f;
    for (int k = 0; k < n; ++k) a += w[k] * src[k * stride + i];
    acc[i] = a;
  }
}

#if defined(STOKER_HAS_AVX2_PATH)
__attribute__((target("avx2"))) void row_to_floats_avx2(const uint8_t* src, int64_t len,
                                                        float* row) {
  int64_t i = 0;
  for (; i + 16 <= len; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(row + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)));
    _mm256_storeu_ps(row + i + 8,
                     _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(b, b))));
  }
  for (; i < len; ++i) row[i] = float(src[i]);
}

// Output pixels x and x + 1 (x even), tap k: the two pixels' source pixels in one vector's
// halves, times the pair's weights.
__attribute__((target("avx2"), always_inline)) inline __m256 pair_tap(
    const float* row, const int64_t* first, const float* table, int support, int64_t x, int k) {
  const __m256 s =
      _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(row + (first[x] + k) * 3)),
                           _mm_loadu_ps(row + (first[x + 1] + k) * 3), 1);
  return _mm256_mul_ps(_mm256_loadu_ps(table + ((x / 2) * support + k) * 8), s);
}

__attribute__((target("avx2"), always_inline)) inline void store_pair(float* dst, int64_t x,
                                                                      __m256 a) {
  _mm_storeu_ps(dst + x * 3, _mm256_castps256_ps128(a));
  _mm_storeu_ps(dst + x * 3 + 3, _mm256_extractf128_ps(a, 1));
}

// Two output pixels per vector (x in the low half, x + 1 in the high half), four vectors at a
// time: per tap one load, one inserted load, a multiply by the pair's weights and an add.
__attribute__((target("avx2"))) void horizontal_rgb8_avx2(const float* row, float* dst,
                                                          const ResampleWeights& wx,
                                                          const float* table) {
  const int64_t n = wx.out_size;
  const int support = wx.support;
  const int64_t* first = wx.first.data();
  const int* count = wx.count.data();
  int64_t x = 0;
  for (; x + 8 <= n; x += 8) {
    int taps = 0;
    for (int64_t j = x; j < x + 8; ++j) taps = std::max(taps, count[j]);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < taps; ++k) {
      a0 = _mm256_add_ps(a0, pair_tap(row, first, table, support, x, k));
      a1 = _mm256_add_ps(a1, pair_tap(row, first, table, support, x + 2, k));
      a2 = _mm256_add_ps(a2, pair_tap(row, first, table, support, x + 4, k));
      a3 = _mm256_add_ps(a3, pair_tap(row, first, table, support, x + 6, k));
    }
    store_pair(dst, x, a0);
    store_pair(dst, x + 2, a1);
    store_pair(dst, x + 4, a2);
    store_pair(dst, x + 6, a3);
  }
  for (; x + 2 <= n; x += 2) {
    __m256 a = _mm256_setzero_ps();
    for (int k = 0, taps = std::max(count[x], count[x + 1]); k < taps; ++k)
      a = _mm256_add_ps(a, pair_tap(row, first, table, support, x, k));
    store_pair(dst, x, a);
  }
  if (x < n) {  // the last pixel of an odd width
    __m128 a = _mm_setzero_ps();
    for (int k = 0; k < count[x]; ++k)
      a = _mm_add_ps(a, _mm_mul_ps(_mm_loadu_ps(table + ((x / 2) * support + k) * 8),
                                   _mm_loadu_ps(row + (first[x] + k) * 3)));
    _mm_storeu_ps(dst + x * 3, a);
  }
}

__attribute__((target("avx2"))) void vertical_avx2(const float* src, int64_t stride, const float* w,
                                                   int n, float* acc, int64_t len) {
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < n; ++k) {
      const __m256 wk = _mm256_set1_ps(w[k]);
      const float* r = src + k * stride + i;
      a0 = _mm256_add_ps(a0, _mm256_mul_ps(wk, _mm256_loadu_ps(r)));
      a1 = _mm256_add_ps(a1, _mm256_mul_ps(wk, _mm256_loadu_ps(r + 8)));
      a2 = _mm256_add_ps(a2, _mm256_mul_ps(wk, _mm256_loadu_ps(r + 16)));
      a3 = _mm256_add_ps(a3, _mm256_mul_ps(wk, _mm256_loadu_ps(r + 24)));
    }
    _mm256_storeu_ps(acc + i, a0);
    _mm256_storeu_ps(acc + i + 8, a1);
    _mm256_storeu_ps(acc + i + 16, a2);
    _mm256_storeu_ps(acc + i + 24, a3);
  }
  for (; i + 8 <= len; i += 8) {
    __m256 a = _mm256_setzero_ps();
    for (int k = 0; k < n; ++k)
      a = _mm256_add_ps(a,
                        _mm256_mul_ps(_mm256_set1_ps(w[k]), _mm256_loadu_ps(src + k * stride + i)));
    _mm256_storeu_ps(acc + i, a);
  }
  for (; i < len; ++i) {
    float a = 0.f;
    for (int k = 0; k < n; ++k) a += w[k] * src[k * stride + i];
    acc[i] = a;
  }
}

// round_sat_u8's steps on eight floats at a time.
__attribute__((target("avx2"))) void round_sat_u8_avx2(const float* src, uint8_t* dst, int64_t n) {
  const __m256 lo = _mm256_set1_ps(-1.f), hi = _mm256_set1_ps(256.f);
  const __m256 half = _mm256_set1_ps(0.5f), mhalf = _mm256_set1_ps(-0.5f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i t[2];
    for (int h = 0; h < 2; ++h) {
      const __m256 c = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(src + i + h * 8), lo), hi);
      __m256i v = _mm256_cvttps_epi32(c);
      const __m256 f = _mm256_sub_ps(c, _mm256_cvtepi32_ps(v));
      v = _mm256_sub_epi32(v, _mm256_castps_si256(_mm256_cmp_ps(f, half, _CMP_GE_OQ)));
      t[h] = _mm256_add_epi32(v, _mm256_castps_si256(_mm256_cmp_ps(f, mhalf, _CMP_LE_OQ)));
    }
    // The packs work within 128-bit lanes: 0-3 8-11 4-7 12-15 after the first, then put back.
    const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(t[0], t[1]), 0xd8);
    const __m128i b = _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), b);
  }
  for (; i < n; ++i) dst[i] = convert_sat<uint8_t>(src[i]);
}
#endif

}  // namespace

bool allow_avx2(bool allow) {
#if defined(STOKER_HAS_AVX2_PATH)
  const bool was = use_avx2;
  use_avx2 = allow && __builtin_cpu_supports("avx2");
  return was;
#else
  (void)allow;
  return false;
#endif
}

void horizontal_rgb8(const uint8_t* src, int64_t width, float* dst, const ResampleWeights& wx,
                     float* scratch) {
  const int64_t pairs = (wx.out_size + 1) / 2;
  const float* table = scratch;
  float* row = scratch + pairs * wx.support * 8;
#if defined(STOKER_HAS_AVX2_PATH)
  if (use_avx2) {
    row_to_floats_avx2(src, width * 3, row);
    return horizontal_rgb8_avx2(row, dst, wx, table);
  }
#endif
  row_to_floats_sse2(src, width * 3, row);
  horizontal_rgb8_sse2(row, dst, wx, table);
}

void vertical(const float* src, int64_t stride, const float* w, int n, float* acc, int64_t len) {
#if defined(STOKER_HAS_AVX2_PATH)
  if (use_avx2) return vertical_avx2(src, stride, w, n, acc, len);
#endif
  vertical_sse2(src, stride, w, n, acc, len);
}

void round_sat_u8(const float* src, uint8_t* dst, int64_t n) {
  // convert_sat<uint8_t> on four floats: clamp to [-1, 256] (NaN to -1, which saturates to 0
  // as convert_sat's NaN does), truncate, step away from zero on a fraction of a half or more,
  // then saturating packs.
#if defined(STOKER_HAS_AVX2_PATH)
  if (use_avx2) return round_sat_u8_avx2(src, dst, n);
#endif
  const __m128 lo = _mm_set1_ps(-1.f), hi = _mm_set1_ps(256.f);
  const __m128 half = _mm_set1_ps(0.5f), mhalf = _mm_set1_ps(-0.5f);
  auto four = [&](const float* p) {
    const __m128 c = _mm_min_ps(_mm_max_ps(_mm_loadu_ps(p), lo), hi);  // max(NaN, lo) = lo
    __m128i t = _mm_cvttps_epi32(c);
    const __m128 f = _mm_sub_ps(c, _mm_cvtepi32_ps(t));
    t = _mm_sub_epi32(t, _mm_castps_si128(_mm_cmpge_ps(f, half)));  // mask -1: +1
    return _mm_add_epi32(t, _mm_castps_si128(_mm_cmple_ps(f, mhalf)));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_packs_epi32(four(src + i), four(src + i + 4));
    const __m128i b = _mm_packs_epi32(four(src + i + 8), four(src + i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_packus_epi16(a, b));
  }
  for (; i < n; ++i) dst[i] = convert_sat<uint8_t>(src[i]);
}
#else
bool allow_avx2(bool) { return false; }

void horizontal_rgb8(const uint8_t* src, int64_t width, float* dst, const ResampleWeights& wx,
                     float*) {
  for (int64_t x = 0; x < wx.out_size; ++x) {
    const float* w = &wx.weights[size_t(x) * size_t(wx.support)];
    const uint8_t* s = src + wx.first[size_t(x)] * 3;
    float a[3] = {};
    for (int k = 0, taps = wx.count[size_t(x)]; k < taps; ++k)
      for (int ch = 0; ch < 3; ++ch) a[ch] += w[k] * float(s[k * 3 + ch]);
    for (int ch = 0; ch < 3; ++ch) dst[x * 3 + ch] = a[ch];
  }
}

void vertical(const float* src, int64_t stride, const float* w, int n, float* acc, int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    float a = 0.f;
    for (int k = 0; k < n; ++k) a += w[k] * src[k * stride + i];
    acc[i] = a;
  }
}

void round_sat_u8(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = convert_sat<uint8_t>(src[i]);
}
#endif

void prepare_rgb8(const ResampleWeights& wx, int64_t width, float* scratch) {
  const int64_t pairs = (wx.out_size + 1) / 2;
  const int support = wx.support;
  // The pair table: for pixels 2p and 2p + 1 and tap k, eight floats: 2p's weight four times,
  // then 2p + 1's (0 past the last pixel).
  for (int64_t p = 0; p < pairs; ++p)
    for (int k = 0; k < support; ++k) {
      float* t = scratch + (p * support + k) * 8;
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t x = 2 * p + h;
        const float w = x < wx.out_size ? wx.weights[size_t(x * support + k)] : 0.f;
        std::fill(t + h * 4, t + h * 4 + 4, w);
      }
    }
  // The row's padding: every tap of every pixel reads inside [first, first + support).
  float* row = scratch + pairs * support * 8;
  std::fill(row + width * 3, row + (width + support) * 3 + 1, 0.f);
}

}  // namespace stoker::kernels::resize_detail
