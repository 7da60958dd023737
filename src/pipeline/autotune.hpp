// num_threads="auto": how many of the pool's threads work, chosen while the pipeline runs from
// what the consumer sees. Each window (WindowAccumulator: >= 0.5 s and >= 4 batches) gives
// the delivered images/s and the share of the window the consumer waited in run(). Waiting
// means stoker is the bottleneck: more threads are tried (steps of half the count), kept when
// the rate rises by 3% or the waiting halves, else the count goes back and that is the
// ceiling. No waiting means stoker is ahead: one thread fewer is tried, kept while the
// consumer still does not wait and the rate holds (judged only when it waited at all: an idle
// consumer sets the rate itself), else back and that is the floor (threads
// left to the training process). Once both directions are settled the count holds; a lasting
// change of regime (the consumer waiting again for 3 windows, or no longer) reopens the
// search. Outputs do not depend on the thread count (randomness follows the sample index).
#pragma once

#include <string>
#include <vector>

#include "stoker/stats.hpp"

namespace stoker::pipeline {

// What the consumer saw over a window of batches (>= kSeconds and >= kBatches): images/s, the
// share of the time it waited in run(), the mean number of finished batches queued when it
// came, and the share of the time the stage feeding it was blocked on a full queue.
struct TuneWindow {
  double rate = 0, wait = 0, queued = 0, blocked = 0, seconds = 0;
};

class WindowAccumulator {
 public:
  static constexpr double kSeconds = 0.5;
  static constexpr int kBatches = 4;
  // Adds one batch; returns true (and fills `w`) when a window is complete.
  bool add(int images, double seconds, double waited, int queued, double blocked, TuneWindow& w);

 private:
  double seconds_ = 0, waited_ = 0, queued_ = 0, blocked_ = 0;
  int64_t images_ = 0;
  int batches_ = 0;
};

class ThreadTuner {
 public:
  static constexpr double kWaitHigh = 0.03, kWaitLow = 0.01;

  ThreadTuner(int max_threads, int start_threads);

  // Called by the consumer after each batch: its images, the seconds since the last call, how
  // many of them it waited for the batch, and how many finished batches were queued for it
  // when it came. Returns the thread count to use from now on.
  int add_batch(int images, double seconds, double waited, int queued = 0);
  int threads() const { return threads_; }

  // What the tuner did, for stats and traces: at `time` (seconds of windows so far) it set
  // `threads` because of `why`, having measured `rate` images/s and `wait` (share of the
  // window) at the count before.
  using Change = ThreadChange;
  const std::vector<Change>& changes() const { return changes_; }
  bool settled() const { return phase_ == Phase::kHold; }

 private:
  enum class Phase { kWarmup, kMeasure, kTrialUp, kTrialDown, kHold };
  void window(double rate, double wait, double queued);
  void set(int threads, double rate, double wait, std::string why);
  void decide(double rate, double wait, double queued);

  int max_, threads_;
  Phase phase_ = Phase::kWarmup;
  int warmup_windows_ = 2;
  WindowAccumulator windows_;
  double time_ = 0;
  // The count being tried and the baseline it is compared with.
  int base_threads_ = 0;
  double base_rate_ = 0, base_wait_ = 0, base_queued_ = 0;
  bool ceiling_ = false, floor_ = false;
  int regime_windows_ = 0;  // consecutive held windows that contradict the held state
  std::vector<Change> changes_;
};

// prefetch_queue_depth="auto": the consumer's queue grows by one batch when, over two windows
// in a row, the consumer waited while the stage feeding it was blocked on a full queue (more
// than 5% of the window): that stage produces in bursts which a deeper queue absorbs. It never
// shrinks, and stops at kMaxDepth batches (memory).
class DepthTuner {
 public:
  static constexpr int kMaxDepth = 6;
  static constexpr double kBlocked = 0.05;
  explicit DepthTuner(int start) : depth_(start) {}
  // As ThreadTuner::add_batch, with the seconds the feeding stage was blocked since the last
  // call. Returns the depth to use from now on.
  int add_batch(int images, double seconds, double waited, double blocked);
  int depth() const { return depth_; }
  using Change = DepthChange;
  const std::vector<Change>& changes() const { return changes_; }

 private:
  int depth_;
  int bursty_windows_ = 0;
  int warmup_windows_ = 2;
  double time_ = 0;
  WindowAccumulator windows_;
  std::vector<Change> changes_;
};

}  // namespace stoker::pipeline
