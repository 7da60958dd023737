#include "stoker/pipeline/autotune.hpp"

#include <algorithm>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

ThreadTuner::ThreadTuner(int max_threads, int start_threads)
    : max_(max_threads), threads_(std::clamp(start_threads, 1, std::max(1, max_threads))) {
  STOKER_ENFORCE(max_threads >= 1, ValueError,
                 "the automatic thread count needs at least 1 "
                 "thread, got a budget of ",
                 max_threads);
}

int ThreadTuner::add_batch(int images, double seconds, double waited, int queued) {
  win_images_ += images, win_seconds_ += seconds, win_waited_ += waited, ++win_batches_;
  win_queued_ += queued;
  if (win_seconds_ >= kWindowSeconds && win_batches_ >= kWindowBatches) {
    const double rate = double(win_images_) / win_seconds_;
    const double wait = std::clamp(win_waited_ / win_seconds_, 0.0, 1.0);
    const double mean_queued = win_queued_ / win_batches_;
    time_ += win_seconds_;
    win_images_ = 0, win_seconds_ = 0, win_waited_ = 0, win_batches_ = 0, win_queued_ = 0;
    window(rate, wait, mean_queued);
  }
  return threads_;
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
    case Phase::kTrialDown:
      if (wait < kWaitHigh && rate >= base_rate_ * 0.97 && queued >= base_queued_ - 0.5) {
        decide(rate, wait, queued);
      } else {
        floor_ = true;
        set(base_threads_, rate, wait, "fewer threads made the consumer wait");
        phase_ = Phase::kMeasure;
      }
      return;
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
