#include "stoker/pipeline/autotune.hpp"

#include <algorithm>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

ThreadTuner::ThreadTuner(int max_threads, int start_threads)
    : max_(max_threads), threads_(std::clamp(start_threads, 1, std::max(1, max_threads))) {
  STOKER_ENFORCE(max_threads >= 1, ValueError,
                 "the automatic thread count needs a budget of at least 1 thread, got ",
                 max_threads);
}

bool WindowAccumulator::add(int images, double seconds, double waited, int queued, double blocked,
                            TuneWindow& w) {
  images_ += images, seconds_ += seconds, waited_ += waited, queued_ += queued;
  blocked_ += blocked, ++batches_;
  if (seconds_ < kSeconds || batches_ < kBatches) return false;
  w.rate = double(images_) / seconds_;
  w.wait = std::clamp(waited_ / seconds_, 0.0, 1.0);
  w.queued = queued_ / batches_;
  w.blocked = std::clamp(blocked_ / seconds_, 0.0, 1.0);
  w.seconds = seconds_;
  *this = WindowAccumulator();
  return true;
}

int ThreadTuner::add_batch(int images, double seconds, double waited, int queued) {
  TuneWindow w;
  if (windows_.add(images, seconds, waited, queued, 0, w)) {
    time_ += w.seconds;
    window(w.rate, w.wait, w.queued);
  }
  return threads_;
}

int DepthTuner::add_batch(int images, double seconds, double waited, double blocked) {
  TuneWindow w;
  if (!windows_.add(images, seconds, waited, 0, blocked, w)) return depth_;
  time_ += w.seconds;
  if (warmup_windows_ > 0) {  // queues filling: the stage is blocked by design at first
    --warmup_windows_;
    return depth_;
  }
  const bool bursty = w.wait > ThreadTuner::kWaitLow && w.blocked > kBlocked;
  bursty_windows_ = bursty ? bursty_windows_ + 1 : 0;
  if (bursty_windows_ >= 2 && depth_ < kMaxDepth) {
    bursty_windows_ = 0;
    depth_ += 1;
    changes_.push_back({time_, depth_, w.wait, w.blocked,
                        "the consumer waited while the stage feeding it was blocked: a deeper "
                        "queue"});
  }
  return depth_;
}

void ThreadTuner::set(int threads, double rate, double wait, std::string why) {
  threads_ = threads;
  changes_.push_back({time_, threads, rate, wait, std::move(why)});
}

void ThreadTuner::window(double rate, double wait, double queued) {
  switch (phase_) {
    case Phase::kWarmup:  // queues filling, first batches' allocations: not representative
      if (--warmup_windows_ <= 0) phase_ = Phase::kMeasure;
      return;
    case Phase::kMeasure:
      decide(rate, wait, queued);
      return;
    case Phase::kTrialUp:
      if (rate > base_rate_ * 1.03 || wait < base_wait_ * 0.5) {
        decide(rate, wait, queued);  // kept: the trial is the new baseline
      } else {
        ceiling_ = true;
        set(base_threads_, rate, wait, "more threads did not help");
        phase_ = Phase::kMeasure;
      }
      return;
    case Phase::kTrialDown: {
      // A consumer that did not wait set the rate itself (its own step times, noisy under
      // load): the rate says something about stoker only when the consumer waited a little.
      const bool rate_held = wait < kWaitLow || rate >= base_rate_ * 0.97;
      if (wait < kWaitHigh && rate_held && queued >= base_queued_ - 0.5) {
        decide(rate, wait, queued);
      } else {
        floor_ = true;
        set(base_threads_, rate, wait, "fewer threads made the consumer wait");
        phase_ = Phase::kMeasure;
      }
      return;
    }
    case Phase::kHold: {
      // A lasting change of regime reopens the search in its direction: the consumer now
      // waits where it did not (it got faster, or the data got heavier), or no longer waits
      // where it did at the ceiling (it got slower).
      const bool held_waiting = base_wait_ > kWaitHigh;
      const bool waiting = wait > kWaitHigh * 3, idle = wait < kWaitLow;
      const bool contradicts =
          (waiting && !held_waiting && threads_ < max_) || (idle && held_waiting && threads_ > 1);
      regime_windows_ = contradicts ? regime_windows_ + 1 : 0;
      if (regime_windows_ >= 3) {
        regime_windows_ = 0;
        if (waiting) ceiling_ = false;
        if (idle) floor_ = false;
        decide(rate, wait, queued);
      }
      return;
    }
  }
}

void ThreadTuner::decide(double rate, double wait, double queued) {
  base_threads_ = threads_, base_rate_ = rate, base_wait_ = wait, base_queued_ = queued;
  if (wait > kWaitHigh && !ceiling_ && threads_ < max_) {
    phase_ = Phase::kTrialUp;
    set(std::min(max_, threads_ + std::max(1, threads_ / 2)), rate, wait,
        "the consumer waited: more threads");
  } else if (wait < kWaitLow && !floor_ && threads_ > 1) {
    phase_ = Phase::kTrialDown;
    set(threads_ - 1, rate, wait, "stoker is ahead: one thread fewer");
  } else {
    phase_ = Phase::kHold;
  }
}

}  // namespace stoker::pipeline
