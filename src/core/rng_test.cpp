#include "stoker/core/rng.hpp"

#include <gtest/gtest.h>

#include <set>

namespace stoker {
namespace {

// Known-answer vectors from Random123's kat_vectors (philox4x32, 10 rounds).
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomStream, PureFunctionOfItsCoordinates) {
  auto a = random_stream(42, 3, 1000);
  auto b = random_stream(42, 3, 1000);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(a.next_u32(), b.next_u32());
  std::set<uint32_t> firsts;
  for (uint64_t s : {0ull, 1ull, 1ull << 32}) firsts.insert(random_stream(42, 3, s).next_u32());
  firsts.insert(random_stream(43, 3, 0).next_u32());
  firsts.insert(random_stream(42, 4, 0).next_u32());
  firsts.insert(random_stream(42, 3, 0, 1).next_u32());
  EXPECT_EQ(firsts.size(), 6u);
}

TEST(RandomStream, UniformMomentsAndRange) {
  auto r = random_stream(1, 1, 1);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    float u = r.uniform();
    ASSERT_GE(u, 0.f);
    ASSERT_LT(u, 1.f);
    sum += u;
    sq += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), 1.0 / 12, 0.002);
}

TEST(RandomStream, BelowIsUnbiased) {
  auto r = random_stream(5, 0, 0);
  int counts[3] = {};
  for (int i = 0; i < 30000; ++i) counts[r.below(3)]++;
  for (int c : counts) EXPECT_NEAR(c, 10000, 400);
}

TEST(RandomStream, NormalMoments) {
  auto r = random_stream(9, 2, 7);
  double sum = 0, sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    double x = r.normal();
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.02);
  EXPECT_NEAR(sq / n, 1.0, 0.02);
}

}  // namespace
}  // namespace stoker
