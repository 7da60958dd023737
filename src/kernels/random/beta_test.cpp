#include "stoker/kernels/random/beta.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stoker/core/rng.hpp"

namespace stoker::kernels {
namespace {

// The Beta distribution's moments, and its CDF by numeric integration of the density
// x^(a-1) (1-x)^(b-1) / B(a, b) (midpoint rule in the variable t = x^a, which takes the
// singularity at 0 away), against the empirical distribution of many draws.
double beta_cdf(double a, double b, double x) {
  const int steps = 20000;
  const double log_beta = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  const double t_end = std::pow(x, a);
  double sum = 0;
  for (int k = 0; k < steps; ++k) {  // dx = t^(1/a - 1) / a dt: the integrand is (1-x)^(b-1) / a
    const double t = (k + 0.5) * t_end / steps;
    const double xx = std::pow(t, 1 / a);
    sum += std::pow(1 - xx, b - 1) / a;
  }
  return sum * t_end / steps / std::exp(log_beta);
}

void expect_beta(double a, double b) {
  SCOPED_TRACE(::testing::Message() << "alpha " << a << " beta " << b);
  auto rng = random_stream(11, 3, 0);
  const int n = 200000;
  std::vector<double> x(n);
  double sum = 0, sq = 0;
  for (auto& v : x) {
    v = beta_draw(a, b, rng);
    ASSERT_GE(v, 0.0);
    ASSERT_LE(v, 1.0);
    sum += v, sq += v * v;
  }
  const double mean = a / (a + b), var = a * b / ((a + b) * (a + b) * (a + b + 1));
  EXPECT_NEAR(sum / n, mean, 5 * std::sqrt(var / n));
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), var, 0.02 * var + 1e-4);
  std::sort(x.begin(), x.end());
  // Kolmogorov-Smirnov at a few points (the 99.9% bound is about 1.95 / sqrt(n)).
  for (double q : {0.1, 0.3, 0.5, 0.7, 0.9}) {
    const double empirical = double(std::lower_bound(x.begin(), x.end(), q) - x.begin()) / n;
    EXPECT_NEAR(empirical, beta_cdf(a, b, q), 1.95 / std::sqrt(double(n))) << "at " << q;
  }
}

TEST(BetaDraw, MatchesTheDistribution) {
  expect_beta(1, 1);
  expect_beta(2, 5);
  expect_beta(0.5, 3);    // one parameter below 1: plain gammas
  expect_beta(0.3, 0.6);  // both below 1: the log-space path
  expect_beta(7.5, 0.9);
}

// Tiny parameters put the mass at 0 and 1 (a Bernoulli(alpha / (alpha + beta)) in the limit)
// without NaNs.
TEST(BetaDraw, TinyParametersGiveNoNaN) {
  auto rng = random_stream(5, 1, 0);
  int ones = 0;
  for (int k = 0; k < 20000; ++k) {
    const double v = beta_draw(1e-30, 3e-30, rng);
    ASSERT_FALSE(std::isnan(v));
    ones += v > 0.5;
  }
  EXPECT_NEAR(ones / 20000.0, 0.25, 0.02);
}

}  // namespace
}  // namespace stoker::kernels
