#include "stoker/core/cpu_features.hpp"
#include "stoker/kernels/normalize/crop_mirror_normalize_cpu.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace stoker::kernels::detail {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// The byte shuffles that gather channel ch of sixteen RGB pixels (48 bytes) from each 16-byte
// third: pixel i's channel is byte 3i + ch of the 48; -1 picks 0.
struct Masks {
  alignas(16) int8_t m[3][3][16];  // [channel][third][lane]
};
constexpr Masks make_masks() {
  Masks k{};
  for (int ch = 0; ch < 3; ++ch)
    for (int third = 0; third < 3; ++third)
      for (int i = 0; i < 16; ++i) {
        const int byte = 3 * i + ch - 16 * third;
        k.m[ch][third][i] = byte >= 0 && byte < 16 ? int8_t(byte) : int8_t(-1);
      }
  return k;
}
constexpr Masks kMasks = make_masks();

// Sixteen RGB pixels into one 16-byte vector per channel.
__attribute__((target("avx2,f16c"), always_inline)) inline void deinterleave16(const uint8_t* p,
                                                                               __m128i out[3]) {
  __m128i third[3];
  for (int t = 0; t < 3; ++t)
    third[t] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * t));
  for (int ch = 0; ch < 3; ++ch) {
    __m128i v = _mm_setzero_si128();
    for (int t = 0; t < 3; ++t)
      v = _mm_or_si128(
          v, _mm_shuffle_epi8(third[t],
                              _mm_load_si128(reinterpret_cast<const __m128i*>(kMasks.m[ch][t]))));
    out[ch] = v;
  }
}

// (v - mean) * inv + shift on eight bytes, as the scalar loop computes it (no FMA).
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 normalize8(__m128i bytes,
                                                                             __m256 mean,
                                                                             __m256 inv,
                                                                             __m256 shift) {
  const __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
  return _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v, mean), inv), shift);
}

template <typename Out>
__attribute__((target("avx2,f16c"))) int64_t rgb8_planar_avx2(const uint8_t* src, int64_t W,
                                                              bool mirror, const float* mean,
                                                              const float* inv, float shift,
                                                              Out* const dst[3]) {
  const __m128i reverse = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m256 sh = _mm256_set1_ps(shift);
  __m256 m[3], s[3];
  for (int ch = 0; ch < 3; ++ch) m[ch] = _mm256_set1_ps(mean[ch]), s[ch] = _mm256_set1_ps(inv[ch]);
  int64_t x = 0;
  for (; x + 16 <= W; x += 16) {
    // Outputs x..x+15: mirrored, source pixels W-16-x..W-1-x in reverse order.
    __m128i px[3];
    deinterleave16(src + (mirror ? W - 16 - x : x) * 3, px);
    const int64_t at = x;
    for (int ch = 0; ch < 3; ++ch) {
      const __m128i b = mirror ? _mm_shuffle_epi8(px[ch], reverse) : px[ch];
      const __m256 lo = normalize8(b, m[ch], s[ch], sh);
      const __m256 hi = normalize8(_mm_unpackhi_epi64(b, b), m[ch], s[ch], sh);
      if constexpr (std::is_same_v<Out, float16>) {
        const __m128i hlo = _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT);
        const __m128i hhi = _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst[ch] + at), _mm256_set_m128i(hhi, hlo));
      } else {
        _mm256_storeu_ps(dst[ch] + at, lo);
        _mm256_storeu_ps(dst[ch] + at + 8, hi);
      }
    }
  }
  return x;
}

const bool kAvx2F16c = __builtin_cpu_supports("avx2") && cpu_has_f16c();

}  // namespace

template <typename Out>
int64_t normalize_rgb8_planar_row(const uint8_t* src, int64_t W, bool mirror, const float* mean,
                                  const float* inv, float shift, Out* const dst[3]) {
  if (!kAvx2F16c) return 0;
  return rgb8_planar_avx2<Out>(src, W, mirror, mean, inv, shift, dst);
}
#else
template <typename Out>
int64_t normalize_rgb8_planar_row(const uint8_t*, int64_t, bool, const float*, const float*, float,
                                  Out* const*) {
  return 0;
}
#endif

template int64_t normalize_rgb8_planar_row<float16>(const uint8_t*, int64_t, bool, const float*,
                                                    const float*, float, float16* const*);
template int64_t normalize_rgb8_planar_row<float>(const uint8_t*, int64_t, bool, const float*,
                                                  const float*, float, float* const*);

}  // namespace stoker::kernels::detail
