// Prefetcher: loads samples in the order they are drawn, up to `depth` ahead, on threads of
// its own, so that reading (and the page faults, and parsing the container) never waits on
// or takes from the compute threads. pop() hands samples out in draw order whatever order
// the loads finish in, so what a pipeline produces never depends on timing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/core/shape.hpp"

namespace stoker::readers {

// One output tensor of a sample: `data` (shaped `shape`) stays valid while `owner` lives.
struct SampleData {
  std::shared_ptr<Buffer> owner;
  const void* data = nullptr;
  TensorShape shape;
};

struct LoadedSample {
  int64_t index = -1;  // in the dataset
  std::vector<SampleData> outputs;
  std::string source_info;
  std::exception_ptr error;  // the load failed: rethrown where the sample is used
};

class Prefetcher {
 public:
  // Called under the prefetcher's lock, one at a time, in order: the next dataset index.
  using Draw = std::function<int64_t()>;
  // Fills sample.outputs and source_info for sample.index; called concurrently. May throw:
  // the exception is kept in the sample.
  using Load = std::function<void(LoadedSample& sample)>;

  Prefetcher(int threads, int depth, Draw draw, Load load);
  ~Prefetcher();  // stops the threads; samples drawn but not popped are dropped
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next sample in draw order, waiting until it is loaded.
  LoadedSample pop();

 private:
  struct Entry {
    LoadedSample sample;
    bool done = false;
  };
  void work();

  Draw draw_;
  Load load_;
  size_t depth_;
  std::mutex mutex_;
  std::condition_variable ready_;  // an entry finished
  std::condition_variable room_;   // the window has room
  std::deque<Entry> window_;       // drawn, in order; deque keeps references stable
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace stoker::readers
