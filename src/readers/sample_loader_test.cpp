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

// The loader's contract, swept over its options: in every epoch, each loader delivers
// epoch_length() samples of that epoch, its real samples are distinct and come before its
// padding (repeats of the last real one), and the loaders of all shards together deliver
// every sample exactly once. A state saved anywhere resumes the same sequence.
struct Sweep {
  int64_t n;
  int shards;
  ShuffleMode mode;
  int fill;
  bool preshuffle, after_epoch, files, stick, pad;
  int batch;
};

std::string describe(const Sweep& c) {
  return detail::concat("N=", c.n, " shards=", c.shards, " mode=", int(c.mode), " fill=", c.fill,
                        " pre=", c.preshuffle, " after=", c.after_epoch, " files=", c.files,
                        " stick=", c.stick, " pad=", c.pad, " batch=", c.batch);
}

LoaderOptions options_of(const Sweep& c, int k) {
  LoaderOptions o{.shard_id = k,
                  .num_shards = c.shards,
                  .stick_to_shard = c.stick,
                  .pad_last_batch = c.pad,
                  .batch_size = c.batch,
                  .shuffle = c.mode,
                  .initial_fill = c.fill,
                  .seed = 17,
                  .instance = 3,
                  .preshuffle = c.preshuffle,
                  .shuffle_after_epoch = c.after_epoch};
  if (c.files) o.file_starts = {0, 2, 2, 5, c.n - 1};  // an empty file and a one-sample file
  return o;
}

std::vector<Sweep> sweep_cases() {
  std::vector<Sweep> out;
  struct Shuffle {
    ShuffleMode mode;
    int fill;
    bool preshuffle, after_epoch, files;
  };
  const Shuffle shuffles[] = {
      {ShuffleMode::kNone, 1, false, false, false},
      {ShuffleMode::kBuffer, 1, false, false, false},
      {ShuffleMode::kBuffer, 4, false, false, false},
      {ShuffleMode::kBuffer, 4, true, false, false},
      {ShuffleMode::kBuffer, 64, true, false, false},
      {ShuffleMode::kGlobal, 1, false, false, false},
      {ShuffleMode::kNone, 1, false, true, false},
      {ShuffleMode::kNone, 1, false, true, true},
      {ShuffleMode::kBuffer, 5, false, true, true},
  };
  for (int64_t n : {7, 10, 33})
    for (int shards : {1, 2, 3, 8})
      for (const auto& s : shuffles)
        for (bool stick : {false, true})
          for (bool pad : {false, true})
            for (int batch : {1, 3, 4}) {
              if (shards > n || (stick && s.after_epoch)) continue;
              out.push_back({n, shards, s.mode, s.fill, s.preshuffle, s.after_epoch, s.files, stick,
                             pad, batch});
            }
  return out;
}

TEST(SampleLoaderSweep, EveryEpochDeliversEverySampleOnceAcrossShards) {
  auto cases = sweep_cases();
  ASSERT_GT(cases.size(), 500u);
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c));
    std::vector<SampleLoader> loaders;
    for (int k = 0; k < c.shards; ++k) loaders.emplace_back(c.n, options_of(c, k));
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      std::vector<int> count(size_t(c.n), 0);
      for (auto& l : loaders) {
        const int64_t length = l.epoch_length(epoch);
        if (c.pad) {
          ASSERT_EQ(length % c.batch, 0);
        }
        bool padding = false;
        int64_t last = -1;
        for (int64_t i = 0; i < length; ++i) {
          auto x = l.next();
          ASSERT_EQ(x.epoch, epoch) << "position " << i;
          if (x.padded) {
            ASSERT_TRUE(c.pad);
            ASSERT_EQ(x.index, last) << "padding repeats the last delivered sample";
            padding = true;
          } else {
            ASSERT_FALSE(padding) << "a real sample after the padding";
            ASSERT_GE(x.index, 0);
            ASSERT_LT(x.index, c.n);
            count[size_t(x.index)]++;
            last = x.index;
          }
        }
      }
      for (int64_t i = 0; i < c.n; ++i)
        ASSERT_EQ(count[size_t(i)], 1) << "sample " << i << " in epoch " << epoch;
    }
  }
}

TEST(SampleLoaderSweep, SavedStatesResumeExactly) {
  auto cases = sweep_cases();
  size_t tried = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c));
    const int k = c.shards - 1;
    SampleLoader a(c.n, options_of(c, k));
    const int64_t stop = (c.n * 7 / 5 + c.batch) % (3 * c.n);  // somewhere in epochs 0-2
    for (int64_t i = 0; i < stop; ++i) a.next();
    SampleLoader b(c.n, options_of(c, k));
    b.restore_state(a.save_state());
    for (int i = 0; i < 3 * c.n; ++i) {
      auto x = a.next(), y = b.next();
      ASSERT_EQ(x.index, y.index) << "step " << i;
      ASSERT_EQ(x.epoch, y.epoch);
      ASSERT_EQ(x.padded, y.padded);
    }
    ++tried;
  }
  EXPECT_EQ(tried, cases.size());
}

// restore_state checks that delivery and stream agree; every state a loader passes through
// must pass that check and resume exactly.
TEST(SampleLoaderSweep, EveryReachableStateIsAcceptedAndResumes) {
  for (const auto& c : sweep_cases()) {
    SCOPED_TRACE(describe(c));
    SampleLoader a(c.n, options_of(c, 0));
    for (int64_t i = 0; i < 3 * c.n; ++i) {
      SampleLoader b(c.n, options_of(c, 0));
      ASSERT_NO_THROW(b.restore_state(a.save_state())) << a.save_state();
      const auto x = a.next(), y = b.next();
      ASSERT_EQ(x.index, y.index) << "step " << i;
    }
  }
}

TEST(SampleLoader, BufferShuffleIsSeededAndBalanced) {
  const int64_t N = 50;
  LoaderOptions o{
      .stick_to_shard = true, .shuffle = ShuffleMode::kBuffer, .initial_fill = 16, .seed = 7};
  SampleLoader a(N, o), b(N, o);
  o.seed = 8;
  SampleLoader c(N, o);
  std::vector<int64_t> first, other;
  std::map<int64_t, int> early;  // how often each sample is among the first 10 of an epoch
  for (int i = 0; i < 40 * N; ++i) {
    auto x = a.next();
    ASSERT_EQ(x.index, b.next().index);
    if (i < N) first.push_back(x.index);
    other.push_back(c.next().index);
    if (i % N < 10) early[x.index]++;
  }
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first, sorted);
  EXPECT_NE(std::vector<int64_t>(other.begin(), other.begin() + N), first);
  // A buffer of 16 reaches only the first 25 samples for an epoch's first 10 outputs.
  for (auto& [idx, n] : early) EXPECT_LT(idx, 26) << idx;
  EXPECT_GT(early.size(), 20u);
  // initial_fill = 1 degenerates to the sequential order, as in DALI.
  SampleLoader seq(N, {.stick_to_shard = true, .shuffle = ShuffleMode::kBuffer, .initial_fill = 1});
  for (int64_t i = 0; i < N; ++i) ASSERT_EQ(seq.next().index, i);
}

// Orders recorded from DALI 2.4 (readers.file over `files` 0..29 with labels = positions;
// python/tests/parity checks the same against DALI itself when it is installed).
TEST(SampleLoader, DaliOrdersExactly) {
  auto epochs = [](LoaderOptions o, int count) {
    SampleLoader l(30, o);
    std::vector<std::vector<int64_t>> out;
    out.resize(size_t(count));
    for (auto& e : out)
      for (int i = 0; i < 30; ++i) e.push_back(l.next().index);
    return out;
  };
  // random_shuffle with initial_fill=1: the buffer is one sample, the order is the pre-shuffle.
  auto pre = epochs({.shuffle = ShuffleMode::kBuffer, .initial_fill = 1, .preshuffle = true}, 2);
  const std::vector<int64_t> dali_pre{26, 17, 19, 10, 23, 14, 20, 11, 8,  12, 6, 4,  22, 15, 27,
                                      0,  7,  29, 28, 1,  13, 24, 3,  16, 5,  2, 21, 18, 25, 9};
  EXPECT_EQ(pre[0], dali_pre);
  EXPECT_EQ(pre[1], dali_pre);
  auto after = epochs({.shuffle_after_epoch = true}, 3);
  EXPECT_EQ(std::vector<int64_t>(after[0].begin(), after[0].begin() + 6),
            (std::vector<int64_t>{18, 16, 19, 14, 20, 2}));
  EXPECT_EQ(std::vector<int64_t>(after[1].begin(), after[1].begin() + 6),
            (std::vector<int64_t>{23, 15, 1, 17, 25, 10}));
  EXPECT_EQ(std::vector<int64_t>(after[2].begin(), after[2].begin() + 6),
            (std::vector<int64_t>{14, 5, 7, 21, 0, 15}));
  auto seeded = epochs({.shuffle_after_epoch = true, .shuffle_after_epoch_seed = 7}, 2);
  EXPECT_EQ(std::vector<int64_t>(seeded[1].begin(), seeded[1].begin() + 6),
            (std::vector<int64_t>{26, 10, 3, 17, 22, 23}));
}

TEST(SampleLoader, ShuffleAfterEpochOfFilesKeepsEachFileInSequence) {
  LoaderOptions o{.shuffle_after_epoch = true, .file_starts = {0, 4, 4, 9}};
  SampleLoader l(12, o);
  std::set<std::vector<int64_t>> orders;
  for (int e = 0; e < 6; ++e) {
    std::vector<int64_t> got;
    for (int i = 0; i < 12; ++i) got.push_back(l.next().index);
    for (size_t i = 1; i < got.size(); ++i) {
      bool same_file = (got[i - 1] < 4) == (got[i] < 4) && (got[i - 1] >= 9) == (got[i] >= 9);
      if (same_file) {
        EXPECT_EQ(got[i], got[i - 1] + 1);
      }
    }
    orders.insert(got);
  }
  EXPECT_GT(orders.size(), 1u);  // three files: the order changes between epochs
}

TEST(SampleLoader, RejectsContradictoryShuffles) {
  try {
    SampleLoader(10, {.stick_to_shard = true, .shuffle_after_epoch = true});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "shuffle_after_epoch and stick_to_shard cannot be both true");
  }
  EXPECT_THROW(SampleLoader(10, {.shuffle = ShuffleMode::kGlobal, .shuffle_after_epoch = true}),
               ValueError);
  SampleLoader l(10, {});
  try {
    l.restore_state("v2 0 99 0 0 0 0 0");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "invalid reader state 'v2 0 99 0 0 0 0 0'");
  }
  try {  // what the loader wrote before epochs stopped mixing in the buffer shuffle
    l.restore_state("v1 0 3 0 0");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "reader state 'v1 0 3 0 0' was saved by an earlier stoker (reader state v1), "
                 "whose buffer shuffle drew across epochs: this version's sample orders differ, "
                 "so there is no place to resume it; start the reader anew");
  }
  EXPECT_THROW(l.restore_state("garbage"), ValueError);
  EXPECT_THROW(l.restore_state("v2 1 0 0 0 0 0 0"), ValueError);      // stream behind delivery
  EXPECT_THROW(l.restore_state("v2 0 3 0 1 0 0 0"), ValueError);      // stream ahead of delivery
  EXPECT_THROW(l.restore_state("v2 0 3 0 0 3 0 1 4:0"), ValueError);  // a buffer, unshuffled
  EXPECT_NO_THROW(l.restore_state("v2 0 3 0 0 3 0 0"));
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
