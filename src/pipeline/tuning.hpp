// The executor's tuners, fed by the consumer at each batch: num_threads="auto" (ThreadTuner:
// the pool's working threads) and prefetch_queue_depth="auto" (DepthTuner: the consumer's
// queue's capacity, from the blocked time of the stage feeding it). Their changes go to the
// trace and to Pipeline::autotune().
#pragma once

#include <memory>
#include <mutex>

#include "stoker/core/thread_pool.hpp"
#include "stoker/options.hpp"
#include "stoker/pipeline/autotune.hpp"
#include "stoker/pipeline/iteration_queue.hpp"
#include "stoker/pipeline/telemetry.hpp"

namespace stoker::pipeline {

class Tuning {
 public:
  // `consumer_queue` is fed by the stage `feeding_stage` (a telemetry id).
  Tuning(const PipelineOptions& options, ThreadPool& pool, IterationQueue& consumer_queue,
         int feeding_stage, Telemetry& telemetry);
  // The consumer took a batch after waiting `waited` seconds, with `queued` finished ones.
  void on_batch(double waited, size_t queued);
  Autotune autotune() const;

 private:
  int batch_size_;
  ThreadPool& pool_;
  IterationQueue& queue_;
  int feeding_stage_;
  Telemetry& telemetry_;
  mutable std::mutex mutex_;
  std::unique_ptr<ThreadTuner> threads_;
  std::unique_ptr<DepthTuner> depth_;
  double last_blocked_ = 0;  // the feeding stage's blocked seconds at the last batch
  Telemetry::Clock::time_point last_batch_;
  int64_t batches_ = 0;
};

}  // namespace stoker::pipeline
