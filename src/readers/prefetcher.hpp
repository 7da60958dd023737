// Prefetcher: loads samples in the order they are drawn, up to `depth` ahead, on threads of
// its own, so that reading (and the page faults, and parsing the container) never waits on
// or takes from the compute threads. A thread draws `group` consecutive samples at a time and
// loads them together (so a reader can fetch consecutive records with one large read). pop()
// hands samples out in draw order whatever order the loads finish in, so what a pipeline
// produces never depends on timing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
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
  // Fills the outputs of a group of consecutive draws; called concurrently for different
  // groups. Records a sample's failure in its `error`; an exception thrown out of it is kept
  // in every sample of the group that has none.
  using Load = std::function<void(std::span<LoadedSample> group)>;

  // Throws RuntimeError (after joining the threads it started) when the system refuses one of
  // the `threads`.
  Prefetcher(int threads, int depth, int group, Draw draw, Load load);
  ~Prefetcher();  // stops the threads; samples drawn but not popped are dropped
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next sample in draw order, waiting until it is loaded.
  LoadedSample pop();

 private:
  struct Group {
    std::vector<LoadedSample> samples;
    size_t popped = 0;
    bool done = false;
  };
  void work();
  void stop_threads();  // stops and joins the threads started

  Draw draw_;
  Load load_;
  size_t depth_, group_;
  size_t pending_ = 0;  // samples drawn and not yet popped
  std::mutex mutex_;
  std::condition_variable ready_;  // an entry finished
  std::condition_variable room_;   // the window has room
  std::deque<Group> window_;       // drawn, in order; deque keeps references stable
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace stoker::readers
