// ThreadTuner against a model of a pipeline: the loader delivers per_thread images/s per thread
// up to a saturation count, the consumer takes at most `consumer` images/s; the consumer waits
// whenever the loader is the slower. Checked: where it settles, how fast, that it stays there
// (no oscillation, also with noisy rates), and that a change of regime reopens the search.
#include "stoker/pipeline/autotune.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {
namespace {

struct Model {
  double per_thread = 1000, consumer = 1e12, noise = 0;
  double consumer_noise = 0;  // the consumer's own step times vary (a loaded machine)
  int saturation = 1000;
  double level = 0;  // batches queued (run()'s queue model)
  std::mt19937 rng{3};
  double loader(int k) { return per_thread * std::min(k, saturation); }
  // One batch of 256 at k threads: (seconds, waited).
  std::pair<double, double> batch(int k) {
    double l = loader(k);
    if (noise > 0) l *= 1 + std::uniform_real_distribution<double>(-noise, noise)(rng);
    double c = consumer;
    if (consumer_noise > 0)
      c *= 1 + std::uniform_real_distribution<double>(-consumer_noise, consumer_noise)(rng);
    const double rate = std::min(l, c);
    const double seconds = 256 / rate;
    return {seconds, l < c ? seconds - 256 / c : 0.0};
  }
};

// Runs the tuner for `seconds` of model time; returns the model seconds at the last change.
// With `queue` > 0 the loader runs ahead into a queue of that many batches: when it is the
// slower, the queue drains first (at the rates' difference) and only then does the consumer
// wait.
double run(ThreadTuner& t, Model& m, double seconds, int queue = 0) {
  double now = 0;
  while (now < seconds) {
    auto [s, w] = m.batch(t.threads());
    if (queue > 0) {
      // Each consumer step takes a queued batch while there is one; meanwhile the loader adds
      // loader/consumer batches.
      const double loader = m.loader(t.threads());
      if (m.level >= 1 || loader >= m.consumer) {
        s = 256 / m.consumer, w = 0;
        m.level = std::clamp(m.level + loader / m.consumer - 1, 0.0, double(queue));
      }
    }
    t.add_batch(256, s, w, int(m.level + 0.5));
    now += s;
  }
  return t.changes().empty() ? 0 : t.changes().back().time;
}

TEST(ThreadTuner, AloneItClimbsToWhereMoreThreadsStopHelping) {
  Model m;
  m.saturation = 6;  // the loader's rate stops growing at 6 threads
  ThreadTuner t(16, 4);
  const double settled_at = run(t, m, 20);
  EXPECT_EQ(t.threads(), 6);
  EXPECT_TRUE(t.settled());
  EXPECT_LT(settled_at, 5.0) << "converges within a few seconds";
  EXPECT_GE(m.loader(t.threads()), 0.95 * m.loader(16));
}

TEST(ThreadTuner, FedItKeepsTheFewestThreadsThatKeepTheConsumerBusy) {
  Model m;
  m.consumer = 3000;  // the training step takes 3,000 images/s; 3 threads deliver that
  ThreadTuner t(16, 8);
  run(t, m, 30);
  EXPECT_EQ(t.threads(), 3);
  EXPECT_TRUE(t.settled());
}

TEST(ThreadTuner, AConsumerWhoseOwnPaceVariesStillGetsThreadsBack) {
  // The consumer never waits (one thread keeps up), but its own steps vary by +-20%: the rate
  // it sets is no evidence against fewer threads.
  Model m;
  m.consumer = 500;
  m.consumer_noise = 0.2;
  ThreadTuner t(4, 4);
  run(t, m, 60);
  EXPECT_EQ(t.threads(), 1);
  for (const auto& c : t.changes()) EXPECT_NE(c.why.find("fewer"), std::string::npos) << c.why;
}

TEST(ThreadTuner, ADrainingQueueStopsTheDescentBeforeTheConsumerWaits) {
  Model m;
  m.consumer = 3000;
  m.level = 3;  // a full queue of 3 batches: a slow loader takes seconds to empty it
  ThreadTuner t(16, 6);
  run(t, m, 40, 3);
  EXPECT_EQ(t.threads(), 3);
  EXPECT_TRUE(t.settled());
  int lowest = 16;
  for (const auto& c : t.changes()) lowest = std::min(lowest, c.threads);
  EXPECT_EQ(lowest, 2) << "one trial below the floor, not a descent until the consumer waits";
}

TEST(ThreadTuner, StableOnceSettledWithNoisyRates) {
  for (double consumer : {1e12, 5500.0}) {
    Model m;
    m.noise = 0.02;
    m.saturation = 10;
    m.consumer = consumer;
    ThreadTuner t(16, 4);
    run(t, m, 20);
    const size_t changes = t.changes().size();
    const int k = t.threads();
    run(t, m, 200);
    EXPECT_EQ(t.changes().size(), changes) << "changed after settling, consumer " << consumer;
    EXPECT_EQ(t.threads(), k);
    EXPECT_GE(std::min(m.loader(k), m.consumer), 0.95 * std::min(m.loader(16), m.consumer));
  }
}

TEST(ThreadTuner, AChangeOfRegimeReopensTheSearch) {
  Model m;
  m.consumer = 3000;
  ThreadTuner t(16, 4);
  run(t, m, 20);
  ASSERT_EQ(t.threads(), 3);
  m.consumer = 1e12;  // the consumer became much faster: stoker is the bottleneck now
  m.saturation = 12;
  run(t, m, 20);
  EXPECT_GE(t.threads(), 12);
  EXPECT_TRUE(t.settled());
  m.consumer = 2000;  // and slower again: threads are given back
  run(t, m, 40);
  EXPECT_EQ(t.threads(), 2);
}

TEST(ThreadTuner, BudgetOfOneAndBadBudgets) {
  Model m;
  ThreadTuner t(1, 4);
  run(t, m, 5);
  EXPECT_EQ(t.threads(), 1);
  EXPECT_TRUE(t.changes().empty());
  EXPECT_THROW(ThreadTuner(0, 1), ValueError);
}

// DepthTuner: grows while the consumer waits and the feeding stage is blocked (bursts), one
// step per two such windows, up to its maximum; steady waiting without blocking (the pipeline
// is simply slower) or blocking without waiting (it is ahead) leaves it alone.
TEST(DepthTuner, GrowsOnlyForBurstsAndStopsAtTheMaximum) {
  // `windows` windows of 10 batches of 51 ms.
  auto feed = [](DepthTuner& t, int windows, double wait, double blocked) {
    for (int b = 0; b < windows * 10; ++b) t.add_batch(8, 0.051, 0.051 * wait, 0.051 * blocked);
  };
  DepthTuner steady(2);
  feed(steady, 20, 0.5, 0.0);  // always waiting, never blocked: more depth would not help
  feed(steady, 20, 0.0, 0.6);  // always ahead
  EXPECT_EQ(steady.depth(), 2);
  EXPECT_TRUE(steady.changes().empty());

  DepthTuner bursty(2);
  feed(bursty, 2, 0.1, 0.3);  // the warm-up windows: no change
  EXPECT_EQ(bursty.depth(), 2);
  feed(bursty, 1, 0.1, 0.3);  // one bursty window is not enough
  EXPECT_EQ(bursty.depth(), 2);
  feed(bursty, 1, 0.1, 0.3);  // two in a row
  EXPECT_EQ(bursty.depth(), 3);
  feed(bursty, 40, 0.1, 0.3);
  EXPECT_EQ(bursty.depth(), DepthTuner::kMaxDepth);
  ASSERT_EQ(bursty.changes().size(), size_t(DepthTuner::kMaxDepth - 2));
  EXPECT_EQ(bursty.changes()[0].depth, 3);
  EXPECT_NEAR(bursty.changes()[0].wait, 0.1, 1e-9);
  EXPECT_NEAR(bursty.changes()[0].blocked, 0.3, 1e-9);
  EXPECT_GT(bursty.changes()[1].time, bursty.changes()[0].time);
}

}  // namespace
}  // namespace stoker::pipeline
