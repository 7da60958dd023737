#include "stoker/readers/sample_loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "stoker/core/error.hpp"

namespace stoker::readers {
namespace {

TEST(SampleLoader, ShardsAreContiguousAndCoverTheDataset) {
  const int64_t N = 103;
  std::vector<int> seen(N, 0);
  for (int k = 0; k < 4; ++k) {
    SampleLoader l(N, {.shard_id = k, .num_shards = 4});
    EXPECT_EQ(l.shard_begin(), N * k / 4);
    for (int64_t i = 0; i < l.shard_size(); ++i) {
      auto n = l.next();
      EXPECT_EQ(n.index, l.shard_begin() + i);
      EXPECT_EQ(n.epoch, 0);
      seen[size_t(n.index)]++;
    }
    EXPECT_EQ(l.next().epoch, 1);  // wraps to the start of its shard
  }
  for (int s : seen) EXPECT_EQ(s, 1);
}

TEST(SampleLoader, ShuffleIsASeededPermutationPerPass) {
  const int64_t N = 50;
  SampleLoader a(N, {.random_shuffle = true, .initial_fill = 16, .seed = 7});
  SampleLoader b(N, {.random_shuffle = true, .initial_fill = 16, .seed = 7});
  SampleLoader c(N, {.random_shuffle = true, .initial_fill = 16, .seed = 8});
  std::vector<int64_t> first, other;
  std::map<int64_t, int> counts;
  for (int i = 0; i < 5 * N; ++i) {
    auto x = a.next();
    ASSERT_EQ(x.index, b.next().index);
    if (i < N) first.push_back(x.index);
    other.push_back(c.next().index);
    counts[x.index]++;
  }
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first, sorted);  // actually shuffled
  EXPECT_NE(std::vector<int64_t>(other.begin(), other.begin() + N), first);
  for (auto& [idx, n] : counts) EXPECT_NEAR(n, 5, 2) << idx;  // buffer keeps counts balanced
}

TEST(SampleLoader, RejectsBadSharding) {
  try {
    SampleLoader(10, {.shard_id = 3, .num_shards = 3});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "shard_id must be in [0, num_shards) = [0, 3), got 3");
  }
  try {
    SampleLoader(2, {.shard_id = 0, .num_shards = 3});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "shard 0 of 3 is empty: the dataset has only 2 samples");
  }
}

}  // namespace
}  // namespace stoker::readers
