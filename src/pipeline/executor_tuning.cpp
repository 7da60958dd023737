// The executor's automatic tuning (num_threads / prefetch_queue_depth "auto", fed by pop())
// and the GPU utilisation monitor's readings.
#include <chrono>

#include "stoker/pipeline/executor.hpp"

namespace stoker::pipeline {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

Autotune Executor::autotune() const {
  std::lock_guard lock(mutex_);
  Autotune a;
  a.threads = thread_pool_.active_threads();
  if (tuner_) a.changes = tuner_->changes();
  a.prefetch_depth = stages_.empty() ? cpu_depth_ : last_depth_;
  if (depth_tuner_) a.prefetch_changes = depth_tuner_->changes();
  return a;
}

GpuUtilization Executor::gpu_utilization() const {
  if (gpu_monitor_) return gpu_monitor_->read();
  GpuUtilization none;
  none.why = "the pipeline has no GPU stages";
  return none;
}

void Executor::tune(double waited, size_t queued) {
  // num_threads="auto": the consumer's step (from the last batch to this one) and its wait.
  const auto now = Clock::now();
  if (tuner_ && consumer_stats_.iterations > 1) {
    const size_t before = tuner_->changes().size();
    const int k = tuner_->add_batch(options_.batch_size,
                                    std::chrono::duration<double>(now - last_pop_).count(), waited,
                                    int(queued));
    if (tuner_->changes().size() != before) {
      thread_pool_.set_active_threads(k);
      if (trace_)
        trace_->span("threads: " + std::to_string(k) + " (" + tuner_->changes().back().why + ")",
                     "autotune", now, now);
    }
  }
  if (depth_tuner_ && consumer_stats_.iterations > 1) {
    // prefetch_queue_depth="auto": the stage feeding the consumer's queue, blocked on it.
    const double blocked = stages_.empty() ? cpu_stats_.blocked : stages_.back().stats.blocked;
    const size_t before = depth_tuner_->changes().size();
    const int d = depth_tuner_->add_batch(options_.batch_size,
                                          std::chrono::duration<double>(now - last_pop_).count(),
                                          waited, blocked - last_blocked_);
    last_blocked_ = blocked;
    if (depth_tuner_->changes().size() != before) {
      (stages_.empty() ? cpu_depth_ : last_depth_) = d;
      changed_.notify_all();
      if (trace_) trace_->span("prefetch depth: " + std::to_string(d), "autotune", now, now);
    }
  }
  last_pop_ = now;
}

}  // namespace stoker::pipeline
