// Beta(alpha, beta) draws (random.beta), in double precision from a stream of 32-bit words
// (`Rng` has next_u32()). X = A / (A + B) with A ~ Gamma(alpha), B ~ Gamma(beta); when both
// parameters are below 1 the gammas crowd at 0 and A + B may round to 0, so, as DALI, each is
// drawn as Gamma(p + 1) * U^(1/p) with the two U^(1/p) factors compared in log space and the
// larger divided out (Devroye, Non-Uniform Random Variate Generation, p. 182).
#pragma once

#include <cmath>
#include <cstdint>

namespace stoker::kernels {

// Uniform in (0, 1) with 53 random bits (never 0 or 1: logs stay finite).
template <typename Rng>
double uniform_open(Rng& rng) {
  const uint64_t bits = (uint64_t(rng.next_u32()) << 21) ^ (uint64_t(rng.next_u32()) >> 11);
  return (double(bits) + 0.5) * 0x1p-53;
}

// Exponential(1), by inversion.
template <typename Rng>
double exponential_draw(Rng& rng) {
  return -std::log(uniform_open(rng));
}

// Standard normal (Box-Muller).
template <typename Rng>
double normal_draw(Rng& rng) {
  const double u1 = uniform_open(rng), u2 = uniform_open(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

// Gamma(shape, 1), shape > 0: Marsaglia and Tsang's squeeze method (2000) for shape >= 1; for
// shape < 1, Gamma(shape + 1) * U^(1/shape).
template <typename Rng>
double gamma_draw(double shape, Rng& rng) {
  if (shape < 1) {
    const double g = gamma_draw(shape + 1, rng);
    return g * std::exp(std::log(uniform_open(rng)) / shape);
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal_draw(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform_open(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// One Beta(alpha, beta) draw in [0, 1]; alpha, beta > 0 and finite.
template <typename Rng>
double beta_draw(double alpha, double beta, Rng& rng) {
  if (!(alpha < 1 && beta < 1)) {
    const double a = gamma_draw(alpha, rng), b = gamma_draw(beta, rng);
    return a / (a + b);
  }
  const double a = gamma_draw(alpha + 1, rng), b = gamma_draw(beta + 1, rng);
  // ln U_a = -E_a; U_a^(1/alpha) vs U_b^(1/beta), compared as -E_a * (beta / alpha) vs -E_b
  // so that a subnormal alpha or beta gives no infinities.
  const double b_div_a = beta / alpha;
  const double ln_ua = -exponential_draw(rng), ln_ub = -exponential_draw(rng);
  if (ln_ua * b_div_a < ln_ub) {
    const double ac = a * std::exp((ln_ua * b_div_a - ln_ub) / beta);  // a * [0, 1]
    return ac / (ac + b);
  }
  const double bc = b * std::exp((ln_ub - ln_ua * b_div_a) / beta);  // b * [0, 1]
  return a / (a + bc);
}

}  // namespace stoker::kernels
