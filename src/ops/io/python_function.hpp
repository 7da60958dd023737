// python_function: a batch handed to a function that runs outside stoker's threads (Python
// functions, served by the Python layer on a thread of its own that holds the GIL; stoker's
// threads never take it: the Python thread may hold it while it waits for them).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema python_function_schema();

// One call of a function: the operator fills function, inputs and the rest; the server fills
// outputs (or error) and marks it done.
struct ForeignCall {
  int64_t function = 0;
  std::string op;  // the operator's name, for errors
  std::vector<Batch> inputs;
  std::vector<Batch> outputs;
  bool on_gpu = false;  // gpu backend: device inputs and outputs
  // Set by the server: the function's device work, recorded on its streams (never on the stage's
  // stream, which a closing pipeline may have destroyed while the function still ran); the
  // operator makes its stream wait for them.
  std::vector<std::shared_ptr<CudaEvent>> ready;
  int device_id = -1;
  int batch_size = 0;
  double seconds = 0;  // the function's own time, measured by the server
  std::string error;   // set: the call failed with this message
  bool done = false;
};

// The process-wide queue between python_function operators and the server.
class ForeignCalls {
 public:
  static ForeignCalls& instance();
  // Operator side: queues `call` and waits until it is served, or `stopping` is set (the
  // pipeline closes: throws), or nothing serves the queue (throws after a clear message).
  void call(const std::shared_ptr<ForeignCall>& call, const std::atomic<bool>* stopping);
  // Server side: the next call, or null after `timeout_s` or when shut down.
  std::shared_ptr<ForeignCall> next(double timeout_s);
  void finish(const std::shared_ptr<ForeignCall>& call);
  // A server is running (set by it); calls without one fail at once.
  void set_served(bool served);
  bool served();

 private:
  std::mutex mutex_;
  std::condition_variable queued_, finished_;
  std::deque<std::shared_ptr<ForeignCall>> queue_;
  bool served_ = false;
};

}  // namespace stoker::ops
