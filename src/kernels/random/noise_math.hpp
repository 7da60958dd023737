// Random draws for the noise operators, defined once for the CPU and the GPU so that both
// backends give the same values bit for bit: Philox4x32-10, uniforms, a normal pair and Poisson
// draws, on logarithms, exponentials and sines of our own made only of IEEE-rounded + - * / and
// sqrt (libm's and CUDA's transcendental functions differ in their last bits).
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels::noise_math {

// Philox4x32-10 (core/rng.hpp's philox4x32_10, also usable on the device).
STOKER_HOST_DEVICE inline void philox(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
    const uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c[1] ^ k0, n2 = uint32_t(p0 >> 32) ^ c[3] ^ k1;
    c[0] = n0, c[1] = uint32_t(p1), c[2] = n2, c[3] = uint32_t(p0);
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
}

// The block `draw` of element (or draw unit) `unit` of a sample keyed by (k0, k1).
struct Block {
  uint32_t r[4];
};
STOKER_HOST_DEVICE inline Block block(uint32_t k0, uint32_t k1, uint64_t unit, uint32_t draw) {
  Block b{{draw, uint32_t(unit), uint32_t(unit >> 32), 0x6e6f6973u}};  // "nois"
  philox(b.r, k0, k1);
  return b;
}

// Uniform in [0, 1) with 53 random bits from two words; with 24 bits from one (exact floats).
STOKER_HOST_DEVICE inline double uniform53(uint32_t hi, uint32_t lo) {
  return double((uint64_t(hi >> 5) << 26) | (lo >> 6)) * (1.0 / 9007199254740992.0);
}
STOKER_HOST_DEVICE inline float uniform24(uint32_t r) {
  return float(r >> 8) * (1.0f / 16777216.0f);
}

STOKER_HOST_DEVICE inline double div_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
STOKER_HOST_DEVICE inline double sqrt_rn(double a) {
#ifdef __CUDA_ARCH__
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
// a * b + c with two roundings (never fused).
STOKER_HOST_DEVICE inline double madd(double a, double b, double c) {
  return add_rn(mul_rn(a, b), c);
}

// log_rn: the natural logarithm (x > 0; 0 gives -inf): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
// and log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its series to s^23 (relative error
// under 1e-19 before rounding).
STOKER_HOST_DEVICE inline double log_rn(double x) {
  if (!(x > 0)) return x == 0 ? -HUGE_VAL : NAN;
  if (x == HUGE_VAL) return x;
  int e = 0;
  double m = frexp(x, &e);  // exact
  if (m < 0.70710678118654752440) m = m * 2, e -= 1;
  const double s = div_rn(m - 1.0, m + 1.0), s2 = mul_rn(s, s);
  double p = 1.0 / 23;
  p = madd(p, s2, 1.0 / 21), p = madd(p, s2, 1.0 / 19), p = madd(p, s2, 1.0 / 17);
  p = madd(p, s2, 1.0 / 15), p = madd(p, s2, 1.0 / 13), p = madd(p, s2, 1.0 / 11);
  p = madd(p, s2, 1.0 / 9), p = madd(p, s2, 1.0 / 7), p = madd(p, s2, 1.0 / 5);
  p = madd(p, s2, 1.0 / 3), p = madd(p, s2, 1.0);
  // e ln 2 in two parts (fdlibm's): the high part times e is exact.
  const double de = double(e);
  return add_rn(madd(de, 6.93147180369123816490e-01, mul_rn(2.0 * s, p)),
                mul_rn(de, 1.90821492927058770002e-10));
}

// e^x for x <= 0 (Poisson's e^-lambda): x = n ln 2 + r, |r| <= 0.35, e^r by its series to r^20.
STOKER_HOST_DEVICE inline double exp_neg(double x) {
  if (x < -745.0) return 0.0;
  const double n = floor(add_rn(mul_rn(x, 1.44269504088896340736), 0.5));
  const double r = add_rn(add_rn(x, -mul_rn(n, 6.93147180369123816490e-01)),
                          -mul_rn(n, 1.90821492927058770002e-10));
  // Horner on 1 + r/1 (1 + r/2 (1 + ...)), the reciprocals rounded once, at compile time.
  constexpr double kInv[21] = {0.0,      1.0,      1.0 / 2,  1.0 / 3,  1.0 / 4,  1.0 / 5,
                               1.0 / 6,  1.0 / 7,  1.0 / 8,  1.0 / 9,  1.0 / 10, 1.0 / 11,
                               1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17,
                               1.0 / 18, 1.0 / 19, 1.0 / 20};
  double p = 1.0;
  for (int k = 20; k >= 1; --k) p = add_rn(mul_rn(mul_rn(p, kInv[k]), r), 1.0);
  return ldexp(p, int(n));  // exact
}

// (cos, sin) of an angle q quarter turns past x, from cn = cos x and sn = sin x (exact).
template <typename F>
STOKER_HOST_DEVICE inline void rotate_quarters(int q, F cn, F sn, F* c, F* s) {
  switch (q & 3) {
    case 0:
      *c = cn, *s = sn;
      break;
    case 1:
      *c = -sn, *s = cn;
      break;
    case 2:
      *c = -cn, *s = -sn;
      break;
    default:
      *c = sn, *s = -cn;
      break;
  }
}

// (cos 2 pi u, sin 2 pi u) for u in [0, 1): the quadrant from 4u (exact), then the series of
// sin and cos on [0, pi/2) to x^23 and x^22.
STOKER_HOST_DEVICE inline void sincos_2pi(double u, double* c, double* s) {
  const double t = 4.0 * u, q = floor(t);
  const double x = mul_rn(t - q, 1.57079632679489661923), x2 = mul_rn(x, x);
  // (-1)^k / (2k+1)! and (-1)^k / (2k)!, correctly rounded.
  constexpr double kSin[12] = {1.0,
                               -0.16666666666666666,
                               0.008333333333333333,
                               -0.0001984126984126984,
                               2.7557319223985893e-06,
                               -2.505210838544172e-08,
                               1.6059043836821613e-10,
                               -7.647163731819816e-13,
                               2.8114572543455206e-15,
                               -8.22063524662433e-18,
                               1.9572941063391263e-20,
                               -3.868170170630684e-23};
  constexpr double kCos[12] = {1.0,
                               -0.5,
                               0.041666666666666664,
                               -0.001388888888888889,
                               2.48015873015873e-05,
                               -2.755731922398589e-07,
                               2.08767569878681e-09,
                               -1.1470745597729725e-11,
                               4.779477332387385e-14,
                               -1.5619206968586225e-16,
                               4.110317623312165e-19,
                               -8.896791392450574e-22};
  double ps = 0.0, pc = 0.0;
  for (int k = 11; k >= 0; --k) ps = madd(ps, x2, kSin[k]), pc = madd(pc, x2, kCos[k]);
  rotate_quarters(int(q), pc, mul_rn(ps, x), c, s);
}

// Two independent standard normals (Box-Muller) from one Philox block.
STOKER_HOST_DEVICE inline void normal_pair(const Block& b, double* z0, double* z1) {
  const double u1 = uniform53(b.r[0], b.r[1]), u2 = uniform53(b.r[2], b.r[3]);
  const double radius = sqrt_rn(-2.0 * log_rn(1.0 - u1));  // 1 - u1 in (0, 1]: finite
  double c = 0, s = 0;
  sincos_2pi(u2, &c, &s);
  *z0 = mul_rn(radius, c), *z1 = mul_rn(radius, s);
}

// log_rn(k!) for an integer k >= 0 (as a double): a table below 10, Stirling's series above.
STOKER_HOST_DEVICE inline double log_factorial(double k) {
  if (k < 10) {
    const double table[10] = {0.0,
                              0.0,
                              0.69314718055994530942,
                              1.79175946922805500081,
                              3.17805383034794561964,
                              4.78749174278204599425,
                              6.57925121201010099506,
                              8.52516136106541430017,
                              10.60460290274525022842,
                              12.80182748008146961121};
    return table[int(k)];
  }
  const double x = k + 1.0, r = div_rn(1.0, x), r2 = mul_rn(r, r);
  double p = 1.0 / 156;
  p = madd(p, r2, -691.0 / 360360), p = madd(p, r2, 1.0 / 1188), p = madd(p, r2, -1.0 / 1680);
  p = madd(p, r2, 1.0 / 1260), p = madd(p, r2, -1.0 / 360), p = madd(p, r2, 1.0 / 12);
  // (x - 1/2) log x - x + log_rn(2 pi) / 2 + series / x
  return add_rn(add_rn(madd(x - 0.5, log_rn(x), -x), 0.91893853320467274178), mul_rn(p, r));
}

// A Poisson draw with mean `lambda` (a double holding an integer) for draw unit `unit`: inversion
// below 10 (one block), Hörmann's PTRS (transformed rejection with squeeze, as numpy) up to 1e10
// (a block per try), a rounded normal above (where Poisson and normal agree to 1e-5).
STOKER_HOST_DEVICE inline double poisson(double lambda, uint32_t k0, uint32_t k1, uint64_t unit) {
  if (!(lambda > 0)) return 0.0;
  if (lambda < 10) {
    const Block b = block(k0, k1, unit, 0);
    const double u = uniform53(b.r[0], b.r[1]);
    double p = exp_neg(-lambda), cdf = p, k = 0;
    while (u >= cdf && k < 200) {
      k += 1;
      p = div_rn(mul_rn(p, lambda), k);
      cdf = add_rn(cdf, p);
    }
    return k;
  }
  if (lambda >= 1e10) {
    double z0 = 0, z1 = 0;
    normal_pair(block(k0, k1, unit, 0), &z0, &z1);
    const double k = floor(madd(sqrt_rn(lambda), z0, lambda) + 0.5);
    return k < 0 ? 0.0 : k;
  }
  const double slam = sqrt_rn(lambda);
  const double b = madd(2.53, slam, 0.931), a = madd(0.02483, b, -0.059);
  // The logarithms only the slow path needs, computed when it is first taken (most draws are
  // accepted by the squeeze).
  double loglam = 0, log_invalpha = 0;
  bool logs = false;
  const double vr = add_rn(0.9277, -div_rn(3.6224, b - 2.0));
  for (uint32_t draw = 0;; ++draw) {
    const Block bl = block(k0, k1, unit, draw);
    const double u = uniform53(bl.r[0], bl.r[1]) - 0.5, v = uniform53(bl.r[2], bl.r[3]);
    const double us = 0.5 - fabs(u);
    if (us == 0) continue;
    const double k = floor(add_rn(madd(add_rn(div_rn(2.0 * a, us), b), u, lambda), 0.43));
    if (us >= 0.07 && v <= vr) return k;
    if (draw >= 1000) return k < 0 ? 0.0 : k;  // never reached in practice: bounds the loop
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (!logs) {
      loglam = log_rn(lambda), log_invalpha = log_rn(add_rn(1.1239, div_rn(1.1328, b - 3.4)));
      logs = true;
    }
    const double lhs =
        add_rn(add_rn(log_rn(v), log_invalpha), -log_rn(add_rn(div_rn(a, mul_rn(us, us)), b)));
    if (lhs <= add_rn(madd(k, loglam, -lambda), -log_factorial(k))) return k;
  }
}

}  // namespace stoker::kernels::noise_math
