#include <cstdint>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define STOKER_NORMAL_AVX2 1
#endif

#include "stoker/kernels/random/normal_draws.hpp"

namespace stoker::kernels {
namespace {
#ifdef STOKER_NORMAL_AVX2

// float32 draws, eight Philox blocks (32 values) at a time: normal_draws.hpp's arithmetic, lane by
// lane, with the same IEEE operations in the same order (AVX2 without FMA: nothing is fused), so
// the values equal the scalar ones bit for bit.
struct Lanes {
  __m256i w[4];
};

__attribute__((target("avx2"), always_inline)) inline void mul_hi_lo(__m256i a, __m256i m,
                                                                     __m256i* hi, __m256i* lo) {
  const __m256i even = _mm256_mul_epu32(a, m);                          // lanes 0, 2, 4, 6
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);  // lanes 1, 3, 5, 7
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

__attribute__((target("avx2"), always_inline)) inline Lanes philox8(int64_t first,
                                                                  const NormalSample& s) {
  __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32(int32_t(uint32_t(first))),
                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i c1 = _mm256_set1_epi32(int32_t(s.ctr1)), c2 = _mm256_set1_epi32(int32_t(s.ctr2));
  __m256i c3 = _mm256_set1_epi32(int32_t(s.ctr3));
  const __m256i m0 = _mm256_set1_epi32(int32_t(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(int32_t(0xCD9E8D57u));
  uint32_t k0 = s.key0, k1 = s.key1;
  for (int round = 0; round < 10; ++round) {
    __m256i hi0, lo0, hi1, lo1;
    mul_hi_lo(c0, m0, &hi0, &lo0);
    mul_hi_lo(c2, m1, &hi1, &lo1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(int32_t(k0)));
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(int32_t(k1)));
    c1 = lo1, c3 = lo0;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

__attribute__((target("avx2"), always_inline)) inline __m256 madd8(__m256 a, __m256 b, __m256 c) {
  return _mm256_add_ps(_mm256_mul_ps(a, b), c);
}

__attribute__((target("avx2"), always_inline)) inline __m256 log_positive8(__m256 x) {
  const __m256i b = _mm256_castps_si256(x);
  __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(126));
  const __m256 f = _mm256_castsi256_ps(_mm256_or_si256(
      _mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000)));
  const __m256 low = _mm256_cmp_ps(f, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
  e = _mm256_add_epi32(e, _mm256_castps_si256(low));  // -1 where low
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 g = _mm256_blendv_ps(_mm256_sub_ps(f, one),
                                    _mm256_sub_ps(_mm256_add_ps(f, f), one), low);
  const __m256 z = _mm256_mul_ps(g, g);
  __m256 y = _mm256_set1_ps(7.0376836292E-2f);
  y = madd8(y, g, _mm256_set1_ps(-1.1514610310E-1f));
  y = madd8(y, g, _mm256_set1_ps(1.1676998740E-1f));
  y = madd8(y, g, _mm256_set1_ps(-1.2420140846E-1f));
  y = madd8(y, g, _mm256_set1_ps(1.4249322787E-1f));
  y = madd8(y, g, _mm256_set1_ps(-1.6668057665E-1f));
  y = madd8(y, g, _mm256_set1_ps(2.0000714765E-1f));
  y = madd8(y, g, _mm256_set1_ps(-2.4999993993E-1f));
  y = madd8(y, g, _mm256_set1_ps(3.3333331174E-1f));
  y = _mm256_mul_ps(_mm256_mul_ps(y, g), z);
  const __m256 fe = _mm256_cvtepi32_ps(e);
  y = madd8(fe, _mm256_set1_ps(-2.12194440E-4f), y);
  y = madd8(_mm256_set1_ps(-0.5f), z, y);
  return madd8(fe, _mm256_set1_ps(0.693359375f), _mm256_add_ps(g, y));
}

__attribute__((target("avx2"), always_inline)) inline void normal_pair8(__m256i w0, __m256i w1,
                                                                      __m256* z0, __m256* z1) {
  const __m256 u = _mm256_mul_ps(
      _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_srli_epi32(w0, 8), _mm256_set1_epi32(1))),
      _mm256_set1_ps(1.0f / 16777216.0f));
  const __m256 r = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), log_positive8(u)));
  const __m256i k = _mm256_srli_epi32(w1, 8);
  const __m256i q = _mm256_srli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(1 << 21)), 22);
  const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(k, _mm256_slli_epi32(q, 22))),
                                 _mm256_set1_ps(3.74507028e-7f));
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 ps = _mm256_set1_ps(-1.9515295891E-4f);
  ps = madd8(ps, z, _mm256_set1_ps(8.3321608736E-3f));
  ps = madd8(ps, z, _mm256_set1_ps(-1.6666654611E-1f));
  const __m256 sn = madd8(_mm256_mul_ps(ps, z), x, x);
  __m256 pc = _mm256_set1_ps(2.443315711809948E-5f);
  pc = madd8(pc, z, _mm256_set1_ps(-1.388731625493765E-3f));
  pc = madd8(pc, z, _mm256_set1_ps(4.166664568298827E-2f));
  const __m256 cn = _mm256_add_ps(
      madd8(_mm256_mul_ps(pc, z), z, _mm256_mul_ps(_mm256_set1_ps(-0.5f), z)), _mm256_set1_ps(1.0f));
  // Quarter turn q: odd q swaps sine and cosine; the cosine is negative for q & 3 in {1, 2}, the
  // sine for {2, 3} (the sign bit flipped, as the scalar negation).
  const __m256 swap = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(q, _mm256_set1_epi32(1)), _mm256_set1_epi32(1)));
  const __m256i two = _mm256_set1_epi32(2);
  const __m256 cneg = _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_and_si256(_mm256_add_epi32(q, _mm256_set1_epi32(1)), two), 30));
  const __m256 sneg = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(q, two), 30));
  const __m256 c = _mm256_xor_ps(_mm256_blendv_ps(cn, sn, swap), cneg);
  const __m256 s = _mm256_xor_ps(_mm256_blendv_ps(sn, cn, swap), sneg);
  *z0 = _mm256_mul_ps(r, c), *z1 = _mm256_mul_ps(r, s);
}

// Blocks [0, full) of a float32 sample, `full` a multiple of 8 with 4 full <= count.
__attribute__((target("avx2"))) void normal_f32_avx2(const NormalSample& s, int64_t full) {
  float* out = static_cast<float*>(s.out);
  const __m256 mean = _mm256_set1_ps(s.mean), stddev = _mm256_set1_ps(s.stddev);
  for (int64_t b = 0; b < full; b += 8) {
    const Lanes l = philox8(b, s);
    __m256 z[4];
    normal_pair8(l.w[0], l.w[1], &z[0], &z[1]);
    normal_pair8(l.w[2], l.w[3], &z[2], &z[3]);
    for (auto& v : z) v = madd8(stddev, v, mean);
    // z[j] lane i is element 4 (b + i) + j: transpose the 4 x 8 values into 32 in a row.
    const __m256 t0 = _mm256_unpacklo_ps(z[0], z[1]), t1 = _mm256_unpackhi_ps(z[0], z[1]);
    const __m256 t2 = _mm256_unpacklo_ps(z[2], z[3]), t3 = _mm256_unpackhi_ps(z[2], z[3]);
    const __m256 r0 = _mm256_shuffle_ps(t0, t2, 0x44), r1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 r2 = _mm256_shuffle_ps(t1, t3, 0x44), r3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    // r0: blocks 0, 4; r1: 1, 5; r2: 2, 6; r3: 3, 7 (a block's four values in each half).
    float* o = out + 4 * b;
    _mm256_storeu_ps(o, _mm256_permute2f128_ps(r0, r1, 0x20));
    _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(r2, r3, 0x20));
    _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(r0, r1, 0x31));
    _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(r2, r3, 0x31));
  }
}

const bool kHaveAvx2 = __builtin_cpu_supports("avx2");
#else   // other CPUs: the scalar draws
const bool kHaveAvx2 = false;
void normal_f32_avx2(const NormalSample&, int64_t) {}
#endif

}  // namespace

void normal_cpu(const NormalSample& s, DType dtype, bool wide, bool simd) {
  visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
              DType::kU64, DType::kI64, DType::kF32, DType::kF64>(
      dtype, "random.normal output", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const int64_t items = normal_items(s.count, wide);
        if (wide) {
          for (int64_t b = 0; b < items; ++b) normal_item<T, true>(s, b);
          return;
        }
        int64_t b = 0;
        if constexpr (std::is_same_v<T, float>) {
          if (simd && kHaveAvx2) {
            b = (s.count / 4) / 8 * 8;  // whole blocks, eight at a time
            normal_f32_avx2(s, b);
          }
        }
        for (; b < items; ++b) normal_item<T, false>(s, b);
      });
}

}  // namespace stoker::kernels
