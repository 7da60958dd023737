// nonsilent_region's float loops with AVX2 (nonsilent_region.hpp): the same IEEE operations in
// the same order as the generic code, lane by lane (AVX2 without FMA: nothing is fused), so the
// values are equal bit for bit.
#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define STOKER_NONSILENT_AVX2 1
#endif

#include "stoker/kernels/signal/nonsilent_region.hpp"

namespace stoker::kernels {
#ifdef STOKER_NONSILENT_AVX2
namespace {

const bool kHaveAvx2 = __builtin_cpu_supports("avx2");

// r[i][j] <- r[j][i].
__attribute__((target("avx2"), always_inline)) inline void transpose8(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// The squares of 8 x `chunks` values from each of eight streams `stride` apart, transposed: in
// sq[c][k], lane l holds stream l's value 8c + k.
template <int kChunks>
__attribute__((target("avx2"), always_inline)) inline void squares(const float* p, int64_t stride,
                                                                   __m256 (&sq)[kChunks][8]) {
  // Stream by stream, whole cache lines: the streams are a multiple of 4 KiB apart (blocks of
  // 8192 floats) and share L1 sets, so visiting them in turn a vector at a time evicts lines
  // before their second half is read (measured: half the speed).
  for (int l = 0; l < 8; ++l)
    for (int c = 0; c < kChunks; ++c) {
      const __m256 v = _mm256_loadu_ps(p + l * stride + 8 * c);
      sq[c][l] = _mm256_mul_ps(v, v);
    }
  for (int c = 0; c < kChunks; ++c) transpose8(sq[c]);
}

__attribute__((target("avx2"))) int64_t blocks_avx2(const float* in, int64_t n, int64_t window,
                                                    int64_t block, int64_t b, float* out) {
  constexpr int kChunks = 8;  // 64 values of each stream per step
  const float mean_factor = 1.f / float(window);
  const __m256 factor = _mm256_set1_ps(mean_factor);
  alignas(32) float lane_sum[8];
  for (; (b + 8) * block <= n; b += 8) {
    const float* src = in + b * block;
    float* dst = out + b * block;
    // The window before each block's first sample, ascending (the blocks start a window in).
    __m256 sum = _mm256_setzero_ps();
    int64_t j = 1 - window;
    for (; j + 8 <= 1; j += 8) {
      __m256 sq[1][8];
      squares<1>(src + j, block, sq);
      for (int k = 0; k < 8; ++k) sum = _mm256_add_ps(sum, sq[0][k]);
    }
    _mm256_store_ps(lane_sum, sum);
    for (; j <= 0; ++j)
      for (int l = 0; l < 8; ++l) {
        const float v = src[l * block + j];
        lane_sum[l] += v * v;
      }
    for (int l = 0; l < 8; ++l) dst[l * block] = lane_sum[l] * mean_factor;
    sum = _mm256_load_ps(lane_sum);
    // Running: the sample leaving the window, then the one entering.
    int64_t k = 1;
    for (; k + 8 * kChunks <= block; k += 8 * kChunks) {
      __m256 enter[kChunks][8], leave[kChunks][8];
      squares<kChunks>(src + k, block, enter);
      squares<kChunks>(src + k - window, block, leave);
      for (int c = 0; c < kChunks; ++c) {
        for (int q = 0; q < 8; ++q) {
          sum = _mm256_sub_ps(sum, leave[c][q]);
          sum = _mm256_add_ps(sum, enter[c][q]);
          enter[c][q] = _mm256_mul_ps(sum, factor);
        }
        transpose8(enter[c]);
      }
      for (int l = 0; l < 8; ++l)
        for (int c = 0; c < kChunks; ++c) _mm256_storeu_ps(dst + l * block + k + 8 * c, enter[c][l]);
    }
    _mm256_store_ps(lane_sum, sum);
    for (; k < block; ++k)
      for (int l = 0; l < 8; ++l) {
        const float a = src[l * block + k - window], e = src[l * block + k];
        lane_sum[l] -= a * a;
        lane_sum[l] += e * e;
        dst[l * block + k] = lane_sum[l] * mean_factor;
      }
  }
  return b;
}

// max(p[0, n)) for n >= 8, if no value is NaN (false otherwise: std::max's order then matters).
__attribute__((target("avx2"))) bool max_avx2(const float* p, int64_t n, float* result) {
  __m256 m = _mm256_loadu_ps(p), nan = _mm256_cmp_ps(m, m, _CMP_UNORD_Q);
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(p + i);
    m = _mm256_max_ps(m, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan)) return false;
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float r = lanes[0];
  for (int l = 1; l < 8; ++l) r = std::max(r, lanes[l]);
  for (; i < n; ++i) {
    if (p[i] != p[i]) return false;
    r = std::max(r, p[i]);
  }
  *result = r;
  return true;
}

}  // namespace

int64_t mean_square_blocks_avx2(const float* in, int64_t n, int64_t window, int64_t block,
                                int64_t b, float* out) {
  return kHaveAvx2 ? blocks_avx2(in, n, window, block, b, out) : b;
}
#else   // other CPUs: the generic loops do it all
int64_t mean_square_blocks_avx2(const float*, int64_t, int64_t, int64_t, int64_t b, float*) {
  return b;
}
#endif

float power_max(const float* p, int64_t n, bool simd) {
  float m = p[0];
#ifdef STOKER_NONSILENT_AVX2
  if (simd && kHaveAvx2 && n >= 8 && max_avx2(p, n, &m)) return m;
#else
  (void)simd;
#endif
  for (int64_t i = 1; i < n; ++i) m = std::max(m, p[i]);
  return m;
}

}  // namespace stoker::kernels
