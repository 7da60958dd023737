#include "stoker/pipeline/tuning.hpp"

#include <algorithm>
#include <string>

namespace stoker::pipeline {

Tuning::Tuning(const PipelineOptions& options, ThreadPool& pool, IterationQueue& consumer_queue,
               int feeding_stage, Telemetry& telemetry)
    : batch_size_(options.batch_size),
      pool_(pool),
      queue_(consumer_queue),
      feeding_stage_(feeding_stage),
      telemetry_(telemetry) {
  if (options.auto_threads) {
    threads_ = std::make_unique<ThreadTuner>(options.num_threads, std::min(4, options.num_threads));
    pool_.set_active_threads(threads_->threads());
  }
  if (options.auto_prefetch) depth_ = std::make_unique<DepthTuner>(queue_.capacity());
}

Autotune Tuning::autotune() const {
  std::lock_guard lock(mutex_);
  Autotune a;
  a.threads = pool_.active_threads();
  if (threads_) a.changes = threads_->changes();
  a.prefetch_depth = queue_.capacity();
  if (depth_) a.prefetch_changes = depth_->changes();
  return a;
}

void Tuning::on_batch(double waited, size_t queued) {
  std::lock_guard lock(mutex_);
  const auto now = Telemetry::Clock::now();
  // The consumer's step (from the last batch to this one) and its wait; from the second batch.
  const double step = std::chrono::duration<double>(now - last_batch_).count();
  auto* trace = telemetry_.trace();
  if (threads_ && batches_ > 0) {
    const size_t before = threads_->changes().size();
    const int k = threads_->add_batch(batch_size_, step, waited, int(queued));
    if (threads_->changes().size() != before) {
      pool_.set_active_threads(k);
      if (trace)
        trace->span("threads: " + std::to_string(k) + " (" + threads_->changes().back().why + ")",
                    "autotune", now, now);
    }
  }
  if (depth_ && batches_ > 0) {
    // The stage feeding the consumer's queue, blocked on it.
    const double blocked = telemetry_.stage_blocked(feeding_stage_);
    const size_t before = depth_->changes().size();
    const int d = depth_->add_batch(batch_size_, step, waited, blocked - last_blocked_);
    last_blocked_ = blocked;
    if (depth_->changes().size() != before) {
      queue_.set_capacity(d);
      if (trace) trace->span("prefetch depth: " + std::to_string(d), "autotune", now, now);
    }
  }
  last_batch_ = now;
  ++batches_;
}

}  // namespace stoker::pipeline
