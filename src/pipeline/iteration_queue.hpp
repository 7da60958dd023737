// What travels between the executor's stages: one iteration's values, and the bounded queues
// that carry them (the CPU stage's output, between device stages, the consumer's). A queue has
// one taker (a stage's thread, or the consumer) and one or more givers (the CPU stage's lanes);
// it bounds how far the givers run ahead, ends with the first failed iteration, and wakes
// everyone when the executor stops.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/pipeline/checkpoint.hpp"

namespace stoker::pipeline {

struct Iteration {
  int64_t number = 0;
  Checkpoint after;  // the state once this iteration was produced
  std::vector<Batch> outputs;  // the pipeline's outputs, filled by the last stage
  bool end_of_data = false;    // an external source ended its epoch
  std::exception_ptr error;
  // Between the stages: every node's values (later stages' still empty), the event after the
  // previous device stage's work, and per node what prepare_on_host() returned.
  std::vector<std::vector<Batch>> values;
  std::shared_ptr<CudaEvent> ready;
  std::vector<std::shared_ptr<void>> prepared;

  bool passes_through() const { return error || end_of_data; }  // later stages skip it
};

class IterationQueue {
 public:
  explicit IterationQueue(int capacity) : capacity_(capacity) {}

  // Givers. Waits until the queue has room; the seconds waited, or nullopt once stopped.
  std::optional<double> wait_for_room();
  // Adds `it`; with `in_order`, after iteration it.number - 1 (givers running iterations
  // concurrently; the first is start_order's). False: the giver stops (the queue stopped, or
  // it carries an error: nothing is delivered after a failed iteration).
  bool push(Iteration it, bool in_order = false);
  void start_order(int64_t first) { next_in_order_ = first; }

  // The taker. Waits until an iteration is queued; the seconds waited, or nullopt once stopped.
  std::optional<double> wait_for_item();
  Iteration pop();  // the oldest; after wait_for_item() said there is one
  // The consumer: waits for the next iteration, asking `interrupted` (when given) every 50 ms
  // without the lock and throwing Interrupted when it says so (the iteration stays queued).
  // After a failed iteration was taken, throws RuntimeError naming that failure.
  Iteration take(const std::function<bool()>& interrupted, double& waited);

  void stop();  // wakes every waiter; waits return nullopt, pushes false
  size_t size() const;
  int capacity() const;
  void set_capacity(int capacity);

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Iteration> items_;
  int capacity_;
  bool stopped_ = false, failed_ = false;
  std::string failure_;
  int64_t next_in_order_ = 0;
};

}  // namespace stoker::pipeline
