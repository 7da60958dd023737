#include "stoker/kernels/random/permutation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "stoker/core/rng.hpp"

namespace stoker::kernels {
namespace {

// Whether p is one cycle through all its elements.
bool one_cycle(const std::vector<int32_t>& p) {
  size_t len = 0;
  int32_t at = 0;
  do {
    at = p[size_t(at)];
    ++len;
  } while (at != 0 && len <= p.size());
  return len == p.size();
}

// Each permutation of 4 is drawn about equally often; without fixed points, each of the 3! =
// 6 single 4-cycles (Sattolo's algorithm, as DALI), and nothing else.
TEST(RandomPermutation, DrawsUniformly) {
  auto rng = random_stream(1, 2, 3);
  std::map<std::vector<int32_t>, int> plain, cycles;
  const int n = 48000;
  for (int k = 0; k < n; ++k) {
    auto p = random_permutation(4, false, rng);
    ++plain[p];
    auto sorted = p;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, (std::vector<int32_t>{0, 1, 2, 3}));
    auto d = random_permutation(4, true, rng);
    ASSERT_TRUE(one_cycle(d));
    ++cycles[d];
  }
  ASSERT_EQ(plain.size(), 24u);
  for (const auto& [p, count] : plain) EXPECT_NEAR(count, n / 24.0, 5 * std::sqrt(n / 24.0));
  ASSERT_EQ(cycles.size(), 6u);
  for (const auto& [p, count] : cycles) EXPECT_NEAR(count, n / 6.0, 5 * std::sqrt(n / 6.0));
  EXPECT_EQ(random_permutation(1, true, rng), std::vector<int32_t>{0});  // nothing else exists
  EXPECT_TRUE(random_permutation(0, true, rng).empty());
}

// With repetitions: every position uniform over [0, n), or over [0, n) without itself.
TEST(RandomIndices, DrawUniformly) {
  auto rng = random_stream(4, 5, 6);
  std::vector<std::vector<int>> counts(5, std::vector<int>(5)), no_fixed = counts;
  for (int k = 0; k < 20000; ++k) {
    const auto a = random_indices(5, false, rng), b = random_indices(5, true, rng);
    for (int i = 0; i < 5; ++i)
      ++counts[size_t(i)][size_t(a[size_t(i)])], ++no_fixed[size_t(i)][size_t(b[size_t(i)])];
  }
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      EXPECT_NEAR(counts[size_t(i)][size_t(j)], 4000, 350);
      if (i == j) {
        EXPECT_EQ(no_fixed[size_t(i)][size_t(j)], 0);
      } else {
        EXPECT_NEAR(no_fixed[size_t(i)][size_t(j)], 5000, 400);
      }
    }
  }
  EXPECT_EQ(random_indices(1, true, rng), std::vector<int32_t>{0});
}

}  // namespace
}  // namespace stoker::kernels
