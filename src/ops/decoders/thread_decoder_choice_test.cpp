#include "stoker/ops/decoders/thread_decoder_choice.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace stoker::ops {
namespace {

using Choice = ThreadDecoderChoice;

// How many of `candidates` a batch gives the CUDA decoder.
int to_cuda(const Choice& c, const Choice::Batch& b, int candidates) {
  int n = 0;
  for (int k = 0; k < candidates; ++k) n += c.to_cuda(b, k);
  return n;
}

TEST(ThreadDecoderChoice, ProbesTheSecondAndThirdBatchesOnlyTheThirdLearnt) {
  Choice c;
  const auto b0 = c.next(), b1 = c.next(), b2 = c.next();
  EXPECT_FALSE(b0.probe);  // nothing known: libjpeg-turbo
  EXPECT_EQ(to_cuda(c, b0, 20), 0);
  EXPECT_TRUE(b1.probe && b1.warmup);
  EXPECT_TRUE(b2.probe && !b2.warmup);
  EXPECT_EQ(to_cuda(c, b2, 20), 5);  // every 4th, from the first
  EXPECT_TRUE(c.to_cuda(b2, 0) && !c.to_cuda(b2, 1) && c.to_cuda(b2, 4));
}

TEST(ThreadDecoderChoice, TakesTheCheaperDecoderOnceBothAreMeasured) {
  for (const bool cuda_cheaper : {true, false}) {
    Choice c;
    for (int i = 0; i < 3; ++i) c.next();
    c.learn(15 * 0.020, 15, 5 * (cuda_cheaper ? 0.009 : 0.030), 5);
    EXPECT_DOUBLE_EQ(c.cpu_cost(), 0.020);
    const auto b = c.next();
    EXPECT_FALSE(b.probe);
    EXPECT_EQ(to_cuda(c, b, 20), cuda_cheaper ? 20 : 0);
  }
}

// A probe whose CUDA images were all left untimed (they enlarged nvJPEG's buffers) measured
// only the CPU: the batches after it probe again, instead of leaving the CUDA decoder unused
// until batch 64 (what made cuda_decoder="auto" run SSD at 0.72x of "on").
TEST(ThreadDecoderChoice, ProbesUntilBothCostsAreKnown) {
  Choice c;
  for (int i = 0; i < 3; ++i) c.next();
  c.learn(15 * 0.020, 15, 0, 0);
  for (int i = 3; i < 10; ++i) EXPECT_TRUE(c.next().probe) << "batch " << i;
  c.learn(15 * 0.020, 15, 5 * 0.009, 5);
  const auto b = c.next();
  EXPECT_FALSE(b.probe);
  EXPECT_EQ(to_cuda(c, b, 8), 8);
}

TEST(ThreadDecoderChoice, StopsProbingAnUnmeasurableDecoderAtBatch32) {
  Choice c;  // e.g. nvJPEG refuses every candidate: the CUDA side is never timed
  std::vector<int> probes;
  for (int i = 0; i < 200; ++i) {
    if (c.next().probe) probes.push_back(i);
    c.learn(0.020, 1, 0, 0);
  }
  std::vector<int> want;
  for (int i = 1; i < Choice::kKnownBy; ++i) want.push_back(i);
  for (int i = Choice::kEvery; i < 200; i += Choice::kEvery) want.push_back(i);
  EXPECT_EQ(probes, want);
}

TEST(ThreadDecoderChoice, ReprobesEvery64thBatchAndFollowsAChange) {
  Choice c;
  for (int i = 0; i < 3; ++i) c.next();
  c.learn(0.020, 1, 0.009, 1);  // CUDA cheaper
  int switched_at = -1;
  for (int i = 3; i < 400 && switched_at < 0; ++i) {
    const auto b = c.next();
    EXPECT_EQ(b.probe, i % Choice::kEvery == 0) << "batch " << i;
    if (!b.probe && !c.to_cuda(b, 0)) switched_at = i;
    // The data changed at batch 100: the CUDA decoder now costs 40 ms, measured only by the
    // probes once the CPU took over; the winner's cost is learnt every batch.
    if (b.probe || c.to_cuda(b, 0))
      c.learn(0.020, 1, i < 100 ? 0.009 : 0.040, 1);
    else
      c.learn(0.020, 1, 0, 0);
  }
  EXPECT_GT(switched_at, 100);
  EXPECT_LT(switched_at, 110);  // the smoothed cost crosses 20 ms within a few batches
}

TEST(ThreadDecoderChoice, SmoothsEachCostOverBatches) {
  Choice c;
  c.learn(0.010, 1, 0.010, 1);
  c.learn(0.020, 1, 0, 0);  // no CUDA images: its cost stays
  EXPECT_DOUBLE_EQ(c.cpu_cost(), 0.7 * 0.010 + 0.3 * 0.020);
  EXPECT_DOUBLE_EQ(c.cuda_cost(), 0.010);
}

}  // namespace
}  // namespace stoker::ops
