#include "stoker/kernels/resize/resize_cpu.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>

namespace stoker::kernels::resize_detail {

#if defined(__SSE2__)
void horizontal_rgb8(const uint8_t* src, int64_t width, float* dst, const ResampleWeights& wx,
                     float* row) {
  // The row as floats first (each source pixel feeds a few taps: converting it once is cheaper
  // than per tap), 16 bytes at a time; one float of padding lets every tap load four floats.
  const int64_t len = width * 3;
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
  row[len] = 0.f;
  const int64_t n = wx.out_size;
  const size_t support = size_t(wx.support);
  auto tap = [&](int64_t x, int k) {  // a tap past a pixel's count has weight 0: any pixel
    const int64_t p = std::min(wx.first[size_t(x)] + k, width - 1);
    return _mm_mul_ps(_mm_set1_ps(wx.weights[size_t(x) * support + size_t(k)]),
                      _mm_loadu_ps(row + p * 3));
  };
  int64_t x = 0;
  // Four output pixels at a time: four independent sums hide the add's latency. Each sum still
  // adds w * s tap by tap, in order, as the generic loop: the same floats (an added 0 * s
  // changes nothing).
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
    // Each store writes a fourth float that the next one overwrites; the last one writes one
    // float past these pixels (the caller leaves room).
    _mm_storeu_ps(dst + x * 3, a0);
    _mm_storeu_ps(dst + x * 3 + 3, a1);
    _mm_storeu_ps(dst + x * 3 + 6, a2);
    _mm_storeu_ps(dst + x * 3 + 9, a3);
  }
  for (; x < n; ++x) {
    __m128 a = _mm_setzero_ps();
    for (int k = 0; k < wx.count[size_t(x)]; ++k) a = _mm_add_ps(a, tap(x, k));
    alignas(16) float lanes[4];
    _mm_store_ps(lanes, a);
    std::memcpy(dst + x * 3, lanes, 3 * sizeof(float));
  }
}

void round_sat_u8(const float* src, uint8_t* dst, int64_t n) {
  // convert_sat<uint8_t> on four floats: clamp to [-1, 256] (NaN to -1, which saturates to 0
  // as convert_sat's NaN does), truncate, step away from zero on a fraction of a half or more,
  // then saturating packs.
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
void horizontal_rgb8(const uint8_t* src, int64_t, float* dst, const ResampleWeights& wx, float*) {
  for (int64_t x = 0; x < wx.out_size; ++x) {
    const float* w = &wx.weights[size_t(x) * size_t(wx.support)];
    const uint8_t* s = src + wx.first[size_t(x)] * 3;
    float a[3] = {};
    for (int k = 0, taps = wx.count[size_t(x)]; k < taps; ++k)
      for (int ch = 0; ch < 3; ++ch) a[ch] += w[k] * float(s[k * 3 + ch]);
    for (int ch = 0; ch < 3; ++ch) dst[x * 3 + ch] = a[ch];
  }
}

void round_sat_u8(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = convert_sat<uint8_t>(src[i]);
}
#endif

}  // namespace stoker::kernels::resize_detail
