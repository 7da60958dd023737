#include "stoker/readers/sample_loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "stoker/core/error.hpp"

namespace stoker::readers {
namespace {

TEST(SampleLoader, ShardsAreContiguousAndCoverTheDataset) {
  const int64_t N = 103;
  std::vector<int> seen(N, 0);
  for (int k = 0; k < 4; ++k) {
    SampleLoader l(N, {.shard_id = k, .num_shards = 4, .stick_to_shard = true});
    EXPECT_EQ(l.shard_begin(), N * k / 4);
    for (int64_t i = 0; i < l.shard_size(); ++i) {
      auto n = l.next();
      EXPECT_EQ(n.index, l.shard_begin() + i);
      EXPECT_EQ(n.epoch, 0);
      seen[size_t(n.index)]++;
    }
    auto wrapped = l.next();  // stick_to_shard: back to the start of its own shard
    EXPECT_EQ(wrapped.epoch, 1);
    EXPECT_EQ(wrapped.index, l.shard_begin());
  }
  for (int s : seen) EXPECT_EQ(s, 1);
}

TEST(SampleLoader, WithoutStickToShardEpochsRotateThroughShards) {
  // DALI's default: epoch e of shard k reads shard (k + e) mod n.
  SampleLoader l(9, {.shard_id = 1, .num_shards = 3});
  std::vector<int64_t> got;
  for (int i = 0; i < 9; ++i) got.push_back(l.next().index);
  EXPECT_EQ(got, (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 0, 1, 2}));
}

TEST(SampleLoader, PadLastBatchRepeatsTheLastSample) {
  // N = 10 in 3 shards: sizes 3, 3, 4; batch 4 -> every epoch has 4 samples.
  for (int k = 0; k < 3; ++k) {
    SampleLoader l(10, {.shard_id = k,
                        .num_shards = 3,
                        .stick_to_shard = true,
                        .pad_last_batch = true,
                        .batch_size = 4});
    EXPECT_EQ(l.epoch_length(), 4);
    EXPECT_EQ(l.epoch_size_padded(), 12);
    std::vector<int64_t> idx;
    int padded = 0;
    for (int i = 0; i < 8; ++i) {
      auto n = l.next();
      idx.push_back(n.index);
      padded += n.padded;
      EXPECT_EQ(n.epoch, i / 4);
    }
    const int64_t b = l.shard_begin(), s = l.shard_size();
    EXPECT_EQ(idx[3], s == 3 ? b + 2 : b + 3);
    EXPECT_EQ(padded, s == 3 ? 2 : 0);
    EXPECT_EQ(idx[4], b);  // the next epoch starts cleanly
  }
}

class GlobalShuffleCoverage : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(GlobalShuffleCoverage, EverySampleExactlyOncePerEpochAcrossShards) {
  auto [shards, pad] = GetParam();
  const int64_t N = 101;
  const int B = 4;
  std::vector<SampleLoader> loaders;
  for (int k = 0; k < shards; ++k)
    loaders.emplace_back(N, LoaderOptions{.shard_id = k,
                                          .num_shards = shards,
                                          .pad_last_batch = pad,
                                          .batch_size = B,
                                          .shuffle = ShuffleMode::kGlobal,
                                          .seed = 11});
  std::vector<int64_t> previous;
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<int> count(N, 0);
    std::vector<int64_t> order;
    for (auto& l : loaders) {
      if (pad) {
        EXPECT_EQ(l.epoch_length() % B, 0);
      }
      for (int64_t i = 0; i < l.epoch_length(); ++i) {
        auto n = l.next();
        ASSERT_EQ(n.epoch, epoch);
        if (!n.padded) count[size_t(n.index)]++, order.push_back(n.index);
      }
    }
    for (int64_t i = 0; i < N; ++i) ASSERT_EQ(count[size_t(i)], 1) << "sample " << i;
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_NE(order, sorted);    // shuffled
    EXPECT_NE(order, previous);  // a fresh permutation each epoch
    previous = order;
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, GlobalShuffleCoverage,
                         ::testing::Combine(::testing::Values(1, 3, 8),
                                            ::testing::Values(false, true)));

TEST(SampleLoader, BufferShuffleIsSeededAndBalanced) {
  const int64_t N = 50;
  LoaderOptions o{
      .stick_to_shard = true, .shuffle = ShuffleMode::kBuffer, .initial_fill = 16, .seed = 7};
  SampleLoader a(N, o), b(N, o);
  o.seed = 8;
  SampleLoader c(N, o);
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
  EXPECT_NE(first, sorted);
  EXPECT_NE(std::vector<int64_t>(other.begin(), other.begin() + N), first);
  for (auto& [idx, n] : counts) EXPECT_NEAR(n, 5, 2) << idx;
  // initial_fill = 1 degenerates to the sequential order, as in DALI.
  SampleLoader seq(N, {.stick_to_shard = true, .shuffle = ShuffleMode::kBuffer, .initial_fill = 1});
  for (int64_t i = 0; i < N; ++i) ASSERT_EQ(seq.next().index, i);
}

TEST(SampleLoader, SaveAndRestoreContinueExactly) {
  for (auto mode : {ShuffleMode::kNone, ShuffleMode::kBuffer, ShuffleMode::kGlobal}) {
    LoaderOptions o{.shard_id = 1,
                    .num_shards = 3,
                    .pad_last_batch = true,
                    .batch_size = 5,
                    .shuffle = mode,
                    .initial_fill = 7,
                    .seed = 3,
                    .instance = 2};
    SampleLoader a(40, o);
    for (int i = 0; i < 37; ++i) a.next();
    auto state = a.save_state();
    SampleLoader b(40, o);
    b.restore_state(state);
    for (int i = 0; i < 100; ++i) {
      auto x = a.next(), y = b.next();
      ASSERT_EQ(x.index, y.index) << int(mode) << " step " << i;
      ASSERT_EQ(x.epoch, y.epoch);
      ASSERT_EQ(x.padded, y.padded);
    }
  }
  SampleLoader l(10, {});
  try {
    l.restore_state("v1 0 99 0 0");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "invalid reader state 'v1 0 99 0 0'");
  }
  EXPECT_THROW(l.restore_state("garbage"), ValueError);
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
    EXPECT_STREQ(e.what(), "num_shards=3 leaves a shard empty: the dataset has only 2 samples");
  }
  EXPECT_THROW(parse_shuffle_mode("random"), ValueError);
}

}  // namespace
}  // namespace stoker::readers
