#include "stoker/ops/decoders/hw_share.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>

namespace stoker::ops {
namespace {

// A mixed stage of batch 256 whose engines decode 25,000 images/s and whose threads 5,000/s
// (in the CPU stage, in parallel with the engines), with 2 ms of other work per batch, fed to
// a consumer that takes a batch every `consumer` seconds (0: as fast as it comes). Each batch's
// share is offered `ahead` batches before it runs (the CPU stage splits batches ahead).
// `interference`: the threads' decoding slows the engines (their time grows by that fraction
// of the threads' part of the batch). Returns the share after each batch; `noise` jitters
// every measured time by up to that fraction.
struct Sim {
  double hw_rate = 25000, threads_rate = 5000, other = 0.002, noise = 0, interference = 0;
  int n = 256, ahead = 2;
  double now = 0;
  int64_t images = 0;
  std::deque<HwShare::Offer> offered;
  std::mt19937 rng{7};

  double jitter(double t) {
    if (noise == 0) return t;
    return t * std::uniform_real_distribution<double>(1 - noise, 1 + noise)(rng);
  }
  double batch(HwShare& s, double consumer) {
    while (int(offered.size()) <= ahead) offered.push_back(s.next());
    const HwShare::Offer offer = offered.front();
    offered.pop_front();
    const int hw_n = int(std::lround(offer.share * n));
    const double engines = hw_rate / (1 + interference * (n - hw_n) / n);
    const double t_hw = jitter(hw_n / engines), t_threads = jitter((n - hw_n) / threads_rate);
    const double busy = t_hw + jitter(other);
    s.started(now);
    s.finished(n, hw_n, t_hw, n - hw_n, t_threads, busy, offer.tag);
    now += std::max({consumer, busy, t_threads});  // the slowest of the three sets the pace
    images += n;
    return s.share();
  }
  // Runs `batches` and returns the largest change of the share over the last `tail` of them.
  double run(HwShare& s, double consumer, int batches, int tail = 20) {
    double prev = s.share(), worst = 0;
    for (int k = 0; k < batches; ++k) {
      const double cur = batch(s, consumer);
      if (k >= batches - tail) worst = std::max(worst, std::abs(cur - prev));
      prev = cur;
    }
    return worst;
  }
  // The loader's images per second over `batches` more, alone.
  double rate(HwShare& s, int batches) {
    const double t0 = now;
    const int64_t i0 = images;
    run(s, 0.0, batches);
    return double(images - i0) / (now - t0);
  }
};

constexpr double kBalanced = 25000.0 / (25000.0 + 5000.0);  // both sides finish together

TEST(HwShare, TheLoaderAloneGetsTheBalancedSplit) {
  HwShare s;
  EXPECT_DOUBLE_EQ(s.share(), 0.8);  // before any measurement
  Sim sim;
  const double wobble = sim.run(s, 0.0, 60);
  EXPECT_NEAR(s.share(), kBalanced, 0.01);
  EXPECT_LT(wobble, 1e-3);  // settled, no oscillation
}

TEST(HwShare, ASlowConsumerGivesTheEnginesEverything) {
  HwShare s;
  Sim sim;
  for (int k = 0; k < 4; ++k) sim.batch(s, 0.057);  // ResNet-50's pace at batch 256
  EXPECT_DOUBLE_EQ(s.share(), 1.0);
  EXPECT_LT(sim.run(s, 0.057, 40), 1e-9);
}

TEST(HwShare, AConsumerInBetweenKeepsTheStageBusyForThreeQuartersOfItsPace) {
  HwShare s;
  Sim sim;
  sim.run(s, 0.015, 80);
  // (0.75 x 15 ms - 2 ms of other work) x 25,000 images/s over 256 images.
  const double expect = (0.75 * 0.015 - 0.002) * 25000 / 256;
  ASSERT_GT(expect, kBalanced);
  EXPECT_NEAR(s.share(), expect, 0.01);
  EXPECT_NEAR(s.pace(), 0.015, 1e-4);
}

TEST(HwShare, FallsBackToTheBalanceWhenTheConsumerSpeedsUp) {
  HwShare s;
  Sim sim;
  sim.run(s, 0.057, 30);
  ASSERT_DOUBLE_EQ(s.share(), 1.0);
  const double wobble = sim.run(s, 0.0, 60);  // training stops: the loader alone again
  EXPECT_NEAR(s.share(), kBalanced, 0.01);
  EXPECT_LT(wobble, 1e-3);
}

TEST(HwShare, AStageBusyWithOtherWorkIsNotTakenForAnIdleOne) {
  // The mixed stage spends 6 ms per batch besides the engines (uploads of the threads' images,
  // waits): its pace is long, but it is busy. Comparing the pace with the engines' time alone
  // pushed the share to 1 here (the loader alone lost 10% on the H100).
  HwShare s;
  Sim sim;
  sim.other = 0.006;
  sim.run(s, 0.0, 60);
  EXPECT_NEAR(s.share(), kBalanced, 0.01);
}

TEST(HwShare, EnginesSlowerThanThePaceAllowsStayAtTheBalance) {
  // The engines are the loader's slower side (a busy GPU): the margin keeps the share from
  // climbing on its own pace (each raise would lengthen the pace that justified it).
  HwShare s;
  Sim sim;
  sim.hw_rate = 6000, sim.threads_rate = 5000;
  sim.run(s, 0.0, 80);
  EXPECT_NEAR(s.share(), 6000.0 / 11000.0, 0.01);
}

TEST(HwShare, NoisyMeasurementsMoveTheShareLittle) {
  for (double consumer : {0.0, 0.015, 0.057}) {
    HwShare s;
    Sim sim;
    sim.noise = 0.1;
    sim.run(s, consumer, 40);
    const double wobble = sim.run(s, consumer, 100, 100);
    EXPECT_LT(wobble, 0.06) << "consumer pace " << consumer;
    EXPECT_GE(s.share(), HwShare::kMinShare);
    EXPECT_LE(s.share(), 1.0);
  }
}

TEST(HwShare, KeepsItsStartingShareUntilBothSidesAreMeasured) {
  HwShare s;
  s.started(0.0);
  s.finished(256, 256, 0.01, 0, 0, 0.012);  // the threads had nothing
  EXPECT_DOUBLE_EQ(s.share(), 0.8);
  s.started(0.05);
  s.finished(256, 200, 0.008, 56, 0.01, 0.01);
  EXPECT_GT(s.share(), 0.8);  // now measured, and the stage idles: the engines take more
}

TEST(HwShare, ThreadsThatSlowTheEnginesGetLessOfTheBatch) {
  // The threads' decoding slows the engines twice as much as the threads' part of the batch:
  // the model's balance is then slower than the engines alone. The probes move the threads'
  // scale down until the engines take the batch, as fast as the engines alone.
  HwShare s;
  Sim sim;
  sim.threads_rate = 8000, sim.interference = 2.0;
  sim.run(s, 0.0, 1500);
  EXPECT_LE(s.threads_scale(), 0.25);
  EXPECT_GT(s.share(), 0.95);
  const double engines_alone = 1.0 / (256 / 25000.0 + 0.002) * 256;
  EXPECT_GT(sim.rate(s, 400), 0.97 * engines_alone);
}

TEST(HwShare, ProbesThatDoNotPayBecomeRare) {
  // Without interference the balance is the fastest split: every probe loses, the scale stays
  // 1, and the waits between probes double, up to kMaxWait phases.
  HwShare s;
  Sim sim;
  sim.run(s, 0.0, 3000);
  EXPECT_DOUBLE_EQ(s.threads_scale(), 1.0);
  EXPECT_NEAR(s.share(), kBalanced, 0.01);
  const int64_t probes = s.probes();
  EXPECT_GE(probes, 5);
  sim.run(s, 0.0, 3 * (HwShare::kMaxWait + 3) * HwShare::kPhase);
  EXPECT_LE(s.probes() - probes, 3);
  // What the probes cost the loader: within 1% of the balance's rate.
  const double balance = 1.0 / (kBalanced * 256 / 25000 + 0.002) * 256;
  EXPECT_GT(sim.rate(s, 2000), 0.99 * balance);
}

TEST(HwShare, APaceSetByTheConsumerIsNotProbed) {
  HwShare s;
  Sim sim;
  sim.run(s, 0.057, 600);
  EXPECT_DOUBLE_EQ(s.share(), 1.0);
  EXPECT_EQ(s.probes(), 0);
}

TEST(HwShare, ACycleCutShortByASlowConsumerIsNotCompared) {
  // The consumer slows down in the middle of probe cycles (the share goes to 1, probes stop),
  // then speeds up again. Without interference the cut cycles move nothing; with it, the
  // comparisons after them still find that the engines alone are faster.
  for (double interference : {0.0, 2.0}) {
    HwShare s;
    Sim sim;
    sim.threads_rate = 8000, sim.interference = interference;
    for (int cut = 0; cut < 6; ++cut) {
      sim.run(s, 0.0, 20 + 7 * cut);
      sim.run(s, 0.057, 30);
      ASSERT_DOUBLE_EQ(s.share(), 1.0);
    }
    sim.run(s, 0.0, 150);
    if (interference == 0) {
      EXPECT_DOUBLE_EQ(s.threads_scale(), 1.0);
      EXPECT_NEAR(s.share(), 25000.0 / 33000.0, 0.01);
    } else {
      EXPECT_DOUBLE_EQ(s.threads_scale(), 0.0);
    }
  }
}

}  // namespace
}  // namespace stoker::ops
