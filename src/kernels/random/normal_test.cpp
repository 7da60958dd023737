#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stoker/core/rng.hpp"
#include "stoker/kernels/random/normal_draws.hpp"

namespace stoker::kernels {
namespace {

namespace nm = normal_math;

NormalSample sample(void* out, int64_t count, uint32_t seed, float mean = 0, float stddev = 1) {
  NormalSample s;
  const RandomStream rng = random_stream(seed, 3, 17, 2);
  s.out = out, s.count = count, s.key0 = rng.key()[0], s.key1 = rng.key()[1];
  s.ctr1 = rng.counter()[1], s.ctr2 = rng.counter()[2], s.ctr3 = rng.counter()[3];
  s.mean = mean, s.stddev = stddev, s.mean_wide = mean, s.stddev_wide = stddev;
  return s;
}

// ln, cos and sin against libm over every input they get: within 2 float ulp.
TEST(NormalMath, FunctionsAgreeWithLibm) {
  for (uint32_t k = 0; k < (1u << 24); k += 97) {
    const float u = float(k + 1) / 16777216.0f;
    const double want = std::log(double(u));
    ASSERT_NEAR(nm::log_positive(u), want, 2.4e-7 * std::max(1e-3, std::fabs(want))) << k;
    float c = 0, s = 0;
    nm::cos_sin_turn(k, &c, &s);
    const double a = 2 * M_PI * double(k) / 16777216.0;
    ASSERT_NEAR(c, std::cos(a), 1.2e-7) << k;
    ASSERT_NEAR(s, std::sin(a), 1.2e-7) << k;
  }
  EXPECT_EQ(nm::log_positive(1.0f), 0.0f);
  float c = 0, s = 0;
  nm::cos_sin_turn(0, &c, &s);
  EXPECT_EQ(c, 1.0f);
  EXPECT_EQ(s, 0.0f);
}

// Element e's value is Box-Muller on the words of block e / 4 of the sample's stream, in order:
// the values replay from the stream, against a double-precision evaluation.
TEST(NormalCpu, DrawsReplayTheSamplesStream) {
  const int64_t n = 4003;
  std::vector<float> out(static_cast<size_t>(n));
  normal_cpu(sample(out.data(), n, 5, 2.0f, 0.5f), DType::kF32, false);
  RandomStream rng = random_stream(5, 3, 17, 2);
  for (int64_t e = 0; e < n; e += 2) {
    const uint32_t w0 = rng.next_u32(), w1 = rng.next_u32();
    const double r = std::sqrt(-2 * std::log(double((w0 >> 8) + 1) / 16777216.0));
    const double a = 2 * M_PI * double(w1 >> 8) / 16777216.0;
    ASSERT_NEAR(out[size_t(e)], 2.0 + 0.5 * r * std::cos(a), 1e-6 * std::max(1.0, r)) << e;
    if (e + 1 < n) {
      ASSERT_NEAR(out[size_t(e + 1)], 2.0 + 0.5 * r * std::sin(a), 1e-6 * std::max(1.0, r)) << e;
    }
  }
}

// AVX2 (where the CPU has it) and the scalar code give the same values bit for bit, whatever the
// count's remainder.
TEST(NormalCpu, SimdEqualsScalarBitForBit) {
  for (int64_t n : {0, 1, 3, 4, 31, 32, 33, 64, 100, 1000, 4099}) {
    std::vector<float> simd(static_cast<size_t>(n)), scalar(static_cast<size_t>(n));
    normal_cpu(sample(simd.data(), n, uint32_t(n)), DType::kF32, false, true);
    normal_cpu(sample(scalar.data(), n, uint32_t(n)), DType::kF32, false, false);
    for (size_t k = 0; k < size_t(n); ++k)
      ASSERT_EQ(std::bit_cast<uint32_t>(simd[k]), std::bit_cast<uint32_t>(scalar[k]))
          << n << " at " << k;
  }
}

TEST(NormalCpu, MomentsOfManyDraws) {
  const int64_t n = 1 << 20;
  std::vector<float> out(static_cast<size_t>(n));
  normal_cpu(sample(out.data(), n, 9), DType::kF32, false);
  double m1 = 0, m2 = 0, m4 = 0, most = 0;
  for (float v : out) m1 += v, m2 += double(v) * v, m4 += double(v) * v * v * v;
  for (float v : out) most = std::max(most, double(std::fabs(v)));
  m1 /= double(n), m2 /= double(n), m4 /= double(n);
  EXPECT_NEAR(m1, 0.0, 5e-3);
  EXPECT_NEAR(m2, 1.0, 5e-3);
  EXPECT_NEAR(m4, 3.0, 5e-2);
  EXPECT_LE(most, 5.78);
  EXPECT_GT(most, 4.5);
}

// Integers: rounded half away from zero and saturated; 32-bit and wider types and float64 draw in
// double, one pair per block (53-bit uniforms).
TEST(NormalCpu, IntegersRoundAndSaturateAndWideTypesDrawInDouble) {
  std::vector<uint8_t> u8(1000);
  normal_cpu(sample(u8.data(), 1000, 1, 250.0f, 20.0f), DType::kU8, false);
  std::vector<float> f(1000);
  normal_cpu(sample(f.data(), 1000, 1, 250.0f, 20.0f), DType::kF32, false);
  for (size_t k = 0; k < f.size(); ++k)
    ASSERT_EQ(u8[k], uint8_t(std::min(255.0f, std::max(0.0f, std::round(f[k]))))) << k;
  std::vector<double> d(5);
  normal_cpu(sample(d.data(), 5, 4, 1.0f, 3.0f), DType::kF64, true);
  RandomStream rng = random_stream(4, 3, 17, 2);
  for (int64_t b = 0; b < 3; ++b) {
    uint32_t w[4];
    for (auto& x : w) x = rng.next_u32();
    double z0 = 0, z1 = 0;
    noise_math::normal_pair(noise_math::Block{{w[0], w[1], w[2], w[3]}}, &z0, &z1);
    EXPECT_EQ(d[size_t(2 * b)], 1.0 + 3.0 * z0);
    if (2 * b + 1 < 5) {
      EXPECT_EQ(d[size_t(2 * b + 1)], 1.0 + 3.0 * z1);
    }
  }
  std::vector<int32_t> i32(6);
  std::vector<double> wide(6);
  normal_cpu(sample(i32.data(), 6, 4, 1.0f, 3e9f), DType::kI32, true);
  normal_cpu(sample(wide.data(), 6, 4, 1.0f, 3e9f), DType::kF64, true);
  bool saturated = false;
  for (size_t k = 0; k < 6; ++k) {
    const double want = std::clamp(std::round(wide[k]), -2147483648.0, 2147483647.0);
    EXPECT_EQ(i32[k], int32_t(want)) << k;
    saturated |= std::fabs(want) == 2147483647.0 || want == -2147483648.0;
  }
  EXPECT_TRUE(saturated);  // a stddev of 3e9: most draws are beyond int32
}

}  // namespace
}  // namespace stoker::kernels
