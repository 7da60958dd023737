#include "stoker/kernels/random/noise.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "stoker/core/rng.hpp"

namespace stoker::kernels {
namespace {

namespace nm = noise_math;

TEST(NoiseMath, PhiloxIsTheCoresPhilox) {
  std::mt19937 g(1);
  for (int t = 0; t < 100; ++t) {
    PhiloxCounter c{uint32_t(g()), uint32_t(g()), uint32_t(g()), uint32_t(g())};
    PhiloxKey k{uint32_t(g()), uint32_t(g())};
    uint32_t ours[4] = {c[0], c[1], c[2], c[3]};
    nm::philox(ours, k[0], k[1]);
    const auto want = philox4x32_10(c, k);
    for (int j = 0; j < 4; ++j) ASSERT_EQ(ours[j], want[size_t(j)]);
  }
}

// The own transcendental functions against libm, over their whole ranges of use.
TEST(NoiseMath, FunctionsAgreeWithLibm) {
  std::mt19937_64 g(2);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int t = 0; t < 20000; ++t) {
    const double x = std::ldexp(0.5 + unit(g), int(g() % 200) - 100);
    ASSERT_NEAR(nm::log_rn(x), std::log(x), 4e-16 * std::max(1.0, std::fabs(std::log(x)))) << x;
    const double y = -745.0 * unit(g);
    ASSERT_NEAR(nm::exp_neg(y), std::exp(y), 4e-16 * std::exp(y)) << y;
    const double u = unit(g);
    double c = 0, s = 0;
    nm::sincos_2pi(u, &c, &s);
    ASSERT_NEAR(c, std::cos(2 * M_PI * u), 2e-15) << u;
    ASSERT_NEAR(s, std::sin(2 * M_PI * u), 2e-15) << u;
  }
  EXPECT_EQ(nm::log_rn(0.0), -HUGE_VAL);
  EXPECT_EQ(nm::log_rn(1.0), 0.0);
  for (double k : {0.0, 1.0, 5.0, 9.0, 10.0, 11.0, 57.0, 1e3, 1e6, 1e9})
    EXPECT_NEAR(nm::log_factorial(k), std::lgamma(k + 1), 2e-15 * std::max(1.0, k * std::log(k)))
        << k;
}

// Poisson draws: mean and variance lambda, and the frequencies of small counts against the
// probability mass function, on every algorithm (inversion, PTRS, normal).
TEST(NoiseMath, PoissonHasPoissonMoments) {
  for (double lambda : {0.05, 0.7, 3.0, 9.99, 10.0, 25.0, 300.0, 1e5, 2e10}) {
    const int n = 200000;
    double sum = 0, sq = 0;
    std::vector<int> count(64);
    for (int e = 0; e < n; ++e) {
      const double k = nm::poisson(lambda, 7, 9, uint64_t(e));
      ASSERT_EQ(k, std::floor(k));
      ASSERT_GE(k, 0);
      sum += k, sq += k * k;
      if (k < 64) ++count[size_t(k)];
    }
    const double mean = sum / n, var = sq / n - mean * mean;
    EXPECT_NEAR(mean, lambda, 5 * std::sqrt(lambda / n)) << lambda;
    EXPECT_NEAR(var / lambda, 1.0, 5 * std::sqrt(2.0 / n) + 1e-9) << lambda;
    if (lambda < 30) {
      for (int k = 0; k < 64; ++k) {
        const double p = std::exp(k * std::log(lambda) - lambda - std::lgamma(k + 1.0));
        EXPECT_NEAR(count[size_t(k)] / double(n), p, 5 * std::sqrt(p / n) + 1e-5)
            << "lambda " << lambda << " k " << k;
      }
    }
  }
  EXPECT_EQ(nm::poisson(0.0, 1, 2, 3), 0.0);
  EXPECT_EQ(nm::poisson(-4.0, 1, 2, 3), 0.0);
  EXPECT_EQ(nm::poisson(NAN, 1, 2, 3), 0.0);
}

// The store rule equals the host's casts: half away from zero, saturated, NaN to 0.
TEST(NoiseStore, EqualsCastValue) {
  std::mt19937 g(3);
  std::uniform_real_distribution<double> d(-1e6, 1e6);
  for (int t = 0; t < 10000; ++t) {
    const double v =
        t < 8 ? std::vector<double>{0.5, -0.5, 1.5, 254.5, 255.5, -128.5, 1e30, -1e30}[size_t(t)]
              : (t % 2 ? d(g) : std::round(d(g) * 2) / 2 / 1000);
    ASSERT_EQ(noise_store<uint8_t>(float(v)), convert_sat<uint8_t>(float(v))) << v;
    ASSERT_EQ(noise_store<int16_t>(float(v)), convert_sat<int16_t>(float(v))) << v;
    ASSERT_EQ(noise_store<int32_t>(v), cast_value<int32_t>(v)) << v;
    ASSERT_EQ(noise_store<uint64_t>(v), cast_value<uint64_t>(v)) << v;
    ASSERT_EQ(noise_store<int64_t>(v * 1e15), cast_value<int64_t>(v * 1e15)) << v;
  }
  EXPECT_EQ(noise_store<uint8_t>(NAN), 0);
  EXPECT_EQ(noise_store<uint32_t>(5e9f), 4294967295u);
  EXPECT_EQ(noise_store<int64_t>(1e19), INT64_MAX);
}

template <typename T>
NoiseSample sample(const std::vector<T>& in, std::vector<T>& out, float p0, float p1) {
  NoiseSample s;
  s.in = in.data(), s.out = out.data(), s.units = int64_t(in.size());
  s.key0 = 11, s.key1 = 22, s.p0 = p0, s.p1 = p1;
  return s;
}

TEST(NoiseCpu, GaussianAddsNormalNoiseAndSaturates) {
  std::vector<uint8_t> in(30001), out(in.size());
  std::mt19937 g(4);
  for (auto& v : in) v = uint8_t(g() % 256);
  noise_cpu(NoiseKind::kGaussian, sample(in, out, 0.f, 0.f), DType::kU8);
  EXPECT_EQ(in, out);  // stddev 0: the identity
  std::vector<float> fin(40001, 5.f), fout(fin.size());
  noise_cpu(NoiseKind::kGaussian, sample(fin, fout, 1.f, 2.f), DType::kF32);
  double sum = 0, sq = 0;
  for (float v : fout) sum += v - 5.0, sq += (v - 5.0) * (v - 5.0);
  const double mean = sum / double(fout.size());
  EXPECT_NEAR(mean, 1.0, 0.04);
  EXPECT_NEAR(std::sqrt(sq / double(fout.size()) - mean * mean), 2.0, 0.04);
  std::vector<uint8_t> hi(1000, 250), hout(hi.size());
  noise_cpu(NoiseKind::kGaussian, sample(hi, hout, 100.f, 1.f), DType::kU8);
  for (auto v : hout) ASSERT_EQ(v, 255);
}

TEST(NoiseCpu, SaltAndPepperSharesADrawPerUnit) {
  // Channels first (3 planes of 4000 pixels): a pixel's three values are corrupted together.
  std::vector<int16_t> in(3 * 4000, 7), out(in.size());
  auto s = sample(in, out, 0.3f, 0.3f * 0.25f);
  int16_t salt = 100, pepper = -100;
  std::memcpy(&s.salt, &salt, 2), std::memcpy(&s.pepper, &pepper, 2);
  s.channels = 3, s.inner = 4000, s.units = 4000;
  noise_cpu(NoiseKind::kSaltAndPepper, s, DType::kI16);
  int salted = 0, peppered = 0;
  for (int p = 0; p < 4000; ++p) {
    ASSERT_EQ(out[size_t(p)], out[size_t(p + 4000)]);
    ASSERT_EQ(out[size_t(p)], out[size_t(p + 8000)]);
    salted += out[size_t(p)] == salt, peppered += out[size_t(p)] == pepper;
  }
  EXPECT_NEAR(salted / 4000.0, 0.075, 0.02);
  EXPECT_NEAR(peppered / 4000.0, 0.225, 0.03);
  s.p0 = 0.f;
  noise_cpu(NoiseKind::kSaltAndPepper, s, DType::kI16);
  EXPECT_EQ(in, out);
  s.p0 = 1.f, s.p1 = 1.f;
  noise_cpu(NoiseKind::kSaltAndPepper, s, DType::kI16);
  for (auto v : out) ASSERT_EQ(v, salt);
}

TEST(NoiseCpu, ShotIsPoissonTimesFactor) {
  std::vector<float> in(50000, 40.f), out(in.size());
  noise_cpu(NoiseKind::kShot, sample(in, out, 4.f, 0.25f), DType::kF32);
  double sum = 0, sq = 0;
  for (float v : out) {
    ASSERT_EQ(std::fmod(v, 4.f), 0.f);
    sum += v, sq += double(v) * v;
  }
  const double mean = sum / double(out.size()), var = sq / double(out.size()) - mean * mean;
  EXPECT_NEAR(mean, 40.0, 0.3);
  EXPECT_NEAR(var / (40.0 * 4.0), 1.0, 0.05);  // variance: mean * factor
  noise_cpu(NoiseKind::kShot, sample(in, out, 0.f, INFINITY), DType::kF32);
  for (float v : out) ASSERT_EQ(v, 0.f);  // factor 0: zeros (DALI 2.4)
  std::vector<uint8_t> neg(100, 9), nout(neg.size());
  noise_cpu(NoiseKind::kShot, sample(neg, nout, -3.f, -1.f / 3), DType::kU8);
  for (auto v : nout) ASSERT_EQ(v, 0);  // max(0, in / factor) = 0 events
}

}  // namespace
}  // namespace stoker::kernels
