// random.normal's draws, defined once for the CPU and the GPU so that both backends give the same
// values bit for bit. Element e of a sample takes its randomness from block e / 4 (float draws)
// or e / 2 (double draws) of the sample's Philox stream (core/rng.hpp), so any element can be
// computed alone — one GPU thread per block, a CPU loop without a sequential state.
//
// Float draws: four normals per block by Box-Muller on 24-bit uniforms, one word per element —
// (w0, w1) give z0 = r cos(a), z1 = r sin(a) with r = sqrt(-2 ln u), u = (w0 >> 8) + 1 over 2^24 in
// (0, 1], and a = 2 pi (w1 >> 8) / 2^24; (w2, w3) give z2, z3 alike. ln, sin and cos are Cephes'
// float polynomials (within 2 ulp) made only of IEEE-rounded * + and sqrt, never fused, so the
// SSE2, AVX2 and CUDA builds agree; |z| <= sqrt(48 ln 2) = 5.77.
// Double draws (float64 and 32/64-bit integer outputs, as DALI draws those in double): one pair
// per block on 53-bit uniforms (noise_math::normal_pair).
#pragma once

#include <cstdint>
#include <cstring>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"
#include "stoker/kernels/random/noise.hpp"
#include "stoker/kernels/random/noise_math.hpp"

namespace stoker::kernels {

// One sample of random.normal: `count` values of mean + stddev z into `out` (the output type's
// elements), from the stream keyed by key0, key1 whose block k has the counter (k, ctr1, ctr2,
// ctr3).
struct NormalSample {
  void* out = nullptr;
  int64_t count = 0;
  uint32_t key0 = 0, key1 = 0, ctr1 = 0, ctr2 = 0, ctr3 = 0;
  float mean = 0, stddev = 1;  // the float draws' (DALI keeps them as float32)
  double mean_wide = 0, stddev_wide = 1;  // the double draws': the float32 values, widened
};

// Work items (Philox blocks) of a sample.
STOKER_HOST_DEVICE inline int64_t normal_items(int64_t count, bool wide) {
  return wide ? (count + 1) / 2 : (count + 3) / 4;
}

namespace normal_math {

STOKER_HOST_DEVICE inline uint32_t float_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}
STOKER_HOST_DEVICE inline float bits_float(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}
STOKER_HOST_DEVICE inline float sqrt_rn(float x) {
#ifdef __CUDA_ARCH__
  return __fsqrt_rn(x);
#else
  return __builtin_sqrtf(x);  // sqrtss: correctly rounded, as __fsqrt_rn
#endif
}
STOKER_HOST_DEVICE inline float madd(float a, float b, float c) { return add_rn(mul_rn(a, b), c); }

// ln x for a normal float x > 0 (Cephes' logf): x = m 2^e with m in [sqrt(1/2), sqrt(2)), and
// ln m by a degree-9 polynomial in m - 1.
STOKER_HOST_DEVICE inline float log_positive(float x) {
  const uint32_t b = float_bits(x);
  int e = int(b >> 23) - 126;                                 // x = f 2^e, f in [0.5, 1)
  float f = bits_float((b & 0x007fffffu) | 0x3f000000u);      // exact
  if (f < 0.707106781186547524f) {
    e -= 1;
    f = add_rn(add_rn(f, f), -1.0f);  // exact: 2f - 1 in [0, 0.414)
  } else {
    f = add_rn(f, -1.0f);  // exact: in [-0.293, 0)
  }
  const float z = mul_rn(f, f);
  float y = 7.0376836292E-2f;
  y = madd(y, f, -1.1514610310E-1f), y = madd(y, f, 1.1676998740E-1f);
  y = madd(y, f, -1.2420140846E-1f), y = madd(y, f, 1.4249322787E-1f);
  y = madd(y, f, -1.6668057665E-1f), y = madd(y, f, 2.0000714765E-1f);
  y = madd(y, f, -2.4999993993E-1f), y = madd(y, f, 3.3333331174E-1f);
  y = mul_rn(mul_rn(y, f), z);
  const float fe = float(e);  // ln 2 in two parts (Cephes'): 0.693359375 fe is exact
  y = madd(fe, -2.12194440E-4f, y);
  y = madd(-0.5f, z, y);
  return madd(fe, 0.693359375f, add_rn(f, y));
}

// cos and sin of 2 pi k / 2^24 for k < 2^24: the nearest quarter turn q from the integer bits
// (exact), the rest x in [-pi/4, pi/4) and Cephes' sinf/cosf polynomials there.
STOKER_HOST_DEVICE inline void cos_sin_turn(uint32_t k, float* c, float* s) {
  const uint32_t q = (k + (1u << 21)) >> 22;                  // 0..4
  const int32_t rest = int32_t(k) - int32_t(q << 22);         // [-2^21, 2^21)
  const float x = mul_rn(float(rest), 3.74507028e-7f);        // pi/2 / 2^22
  const float z = mul_rn(x, x);
  float ps = -1.9515295891E-4f;
  ps = madd(ps, z, 8.3321608736E-3f), ps = madd(ps, z, -1.6666654611E-1f);
  const float sn = madd(mul_rn(ps, z), x, x);
  float pc = 2.443315711809948E-5f;
  pc = madd(pc, z, -1.388731625493765E-3f), pc = madd(pc, z, 4.166664568298827E-2f);
  const float cn = add_rn(madd(mul_rn(pc, z), z, mul_rn(-0.5f, z)), 1.0f);
  noise_math::rotate_quarters(int(q), cn, sn, c, s);
}

// z0 = r cos a, z1 = r sin a from the words (w0, w1).
STOKER_HOST_DEVICE inline void normal_pair_f(uint32_t w0, uint32_t w1, float* z0, float* z1) {
  const float u = mul_rn(float((w0 >> 8) + 1), 1.0f / 16777216.0f);  // (0, 1], exact
  const float r = sqrt_rn(mul_rn(-2.0f, log_positive(u)));
  float c = 0, s = 0;
  cos_sin_turn(w1 >> 8, &c, &s);
  *z0 = mul_rn(r, c), *z1 = mul_rn(r, s);
}

}  // namespace normal_math

// Block b of sample s: its (up to) four float draws or two double draws, stored as T (integers
// rounded half away from zero and saturated, as noise_store).
template <typename T, bool kWide>
STOKER_HOST_DEVICE inline void normal_item(const NormalSample& s, int64_t b) {
  uint32_t w[4] = {uint32_t(b), s.ctr1, s.ctr2, s.ctr3};
  noise_math::philox(w, s.key0, s.key1);
  T* out = static_cast<T*>(s.out);
  if constexpr (kWide) {
    double z[2];
    noise_math::normal_pair(noise_math::Block{{w[0], w[1], w[2], w[3]}}, &z[0], &z[1]);
    for (int j = 0; j < 2; ++j) {
      const int64_t e = 2 * b + j;
      if (e < s.count) out[e] = noise_store<T>(noise_math::madd(s.stddev_wide, z[j], s.mean_wide));
    }
  } else {
    float z[4];
    normal_math::normal_pair_f(w[0], w[1], &z[0], &z[1]);
    normal_math::normal_pair_f(w[2], w[3], &z[2], &z[3]);
    for (int j = 0; j < 4; ++j) {
      const int64_t e = 4 * b + j;
      if (e < s.count) out[e] = noise_store<T>(normal_math::madd(s.stddev, z[j], s.mean));
    }
  }
}

// The CPU kernel: every block of the sample, for output type `dtype` (drawn in double when
// `wide`); float32 draws eight blocks at a time with AVX2 where the CPU has it, unless `simd` is
// false (tests compare the two).
void normal_cpu(const NormalSample& s, DType dtype, bool wide, bool simd = true);

}  // namespace stoker::kernels
