#include "stoker/kernels/tensor/fill_cpu.hpp"

#include <gtest/gtest.h>

#include <random>

namespace stoker::kernels {
namespace {

TEST(BroadcastsTo, FollowsNumpy) {
  EXPECT_TRUE(broadcasts_to({}, {2, 3}));
  EXPECT_TRUE(broadcasts_to({3}, {2, 3}));
  EXPECT_TRUE(broadcasts_to({2, 1}, {2, 3}));
  EXPECT_TRUE(broadcasts_to({1, 1, 3}, {2, 3}));
  EXPECT_TRUE(broadcasts_to({3}, {0, 3}));
  EXPECT_FALSE(broadcasts_to({2}, {2, 3}));
  EXPECT_FALSE(broadcasts_to({2, 3}, {3}));  // more axes than the output (DALI takes row 0)
  EXPECT_FALSE(broadcasts_to({3}, {1}));     // an output axis of 1 does not shrink the fill
  EXPECT_FALSE(broadcasts_to({0}, {}));
  EXPECT_FALSE(broadcasts_to({0}, {2, 3}));
}

// Random shapes and fills against the definition: each output coordinate, aligned from the
// innermost axis, reads the fill at that coordinate, or 0 along axes where the fill has 1.
TEST(BroadcastFillCpu, MatchesTheDefinition) {
  std::mt19937 rng(7);
  for (int t = 0; t < 300; ++t) {
    const size_t nd = rng() % 5;
    std::vector<int64_t> out(nd);
    int64_t volume = 1;
    for (auto& d : out) volume *= (d = int64_t(rng() % 4));  // zeros included
    std::vector<int64_t> fill;
    for (size_t k = nd - std::min<size_t>(nd, rng() % (nd + 1)); k < nd; ++k)
      fill.push_back(rng() % 2 ? 1 : out[k]);
    if (rng() % 4 == 0) fill.insert(fill.begin(), 1);  // a leading axis of 1 is allowed
    ASSERT_TRUE(broadcasts_to(fill, out));
    int64_t fill_volume = 1;
    for (auto d : fill) fill_volume *= d;
    std::vector<int16_t> values(static_cast<size_t>(fill_volume));
    for (auto& v : values) v = int16_t(rng() % 2000) - 1000;
    std::vector<float> got(static_cast<size_t>(volume), -1.f), expect(static_cast<size_t>(volume));
    broadcast_fill_cpu(got.data(), out, values.data(), fill);
    for (int64_t o = 0; o < volume; ++o) {
      int64_t r = o, idx = 0, mul = 1;
      for (size_t k = nd; k-- > 0;) {
        const int64_t c = r % out[k];
        r /= out[k];
        const size_t from_inner = nd - 1 - k;
        if (from_inner < fill.size()) {
          const int64_t f = fill[fill.size() - 1 - from_inner];
          idx += (f == 1 ? 0 : c) * mul;
          mul *= f;
        }
      }
      expect[size_t(o)] = float(values[size_t(idx)]);
    }
    ASSERT_EQ(got, expect) << "trial " << t;
  }
}

TEST(BroadcastFillCpu, ConvertsWithCastRules) {
  const std::vector<float> fill{-5.5f, 300.f, 2.5f};
  std::vector<uint8_t> got(6);
  broadcast_fill_cpu(got.data(), {2, 3}, fill.data(), {3});
  EXPECT_EQ(got, (std::vector<uint8_t>{0, 255, 3, 0, 255, 3}));
}

}  // namespace
}  // namespace stoker::kernels
