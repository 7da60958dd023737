// The CPU stage: produces iterations. It runs the cpu nodes of each iteration in graph order,
// each operator's samples in parallel on the pipeline's pool, and (when device stages follow)
// the host part of mixed nodes fed only by it (Operator::prepare_on_host); it replaces bad
// samples (sample_replacement.hpp), takes each iteration's checkpoint, and hands iterations to
// its output queue, up to prefetch_queue_depth ahead of the consumer, from the first batch
// asked for.
//
// Lanes. Usually one thread: it waits for the slowest pool thread at the end of every
// operator's batch, while the pool's other threads have nothing to do, as they have while the
// thread runs an iteration's serial parts (a reader handing over its samples). For CPU-only
// pipelines with many threads that idle time is about 1.3 of 16 cores (docs/findings.md), and
// far more when a few long samples end each batch (speech). So there two lanes each run whole
// iterations, taking the next one when they finish, on one pool that takes calls from both at
// once (and from the mixed stage): the threads one lane's batch leaves idle work on the
// other's. The second lane runs its own copies of the stateless cpu operators (their results
// depend only on the workspace), so both lanes may be in the same operator; operators with
// state (readers) are shared and run their iterations in order (a lane waits for its turn),
// so samples come in the same order. Results are delivered in iteration order. Pipelines whose
// mixed operators prepare on the host (nvJPEG decoding) keep one lane (choose_lanes says why).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "stoker/pipeline/checkpointer.hpp"
#include "stoker/pipeline/sample_replacement.hpp"
#include "stoker/pipeline/stage.hpp"

namespace stoker::pipeline {

class CpuStage {
 public:
  // Starts producing at `first_iteration` once begin() is called. `feeds_device_stages`: its
  // iterations go to a device stage (which runs the mixed and gpu nodes); `pinned_outputs`
  // (per node, may be empty): nodes whose outputs a device reads by DMA, allocated pinned.
  CpuStage(const StageContext& ctx, Checkpointer& checkpoints, IterationQueue& out,
           int64_t first_iteration, bool feeds_device_stages, std::vector<char> pinned_outputs);
  ~CpuStage();

  void start();  // the lanes' threads, waiting for begin()
  void begin();  // the first batch was asked for: prefetching starts
  void stop();   // wakes lanes waiting for begin() or a turn (the queues stop separately)
  void join();
  int lanes() const { return lanes_; }
  int telemetry_id() const { return id_; }
  double cpu_seconds() const;

 private:
  int choose_lanes() const;
  void make_lane_operators();
  void lane_loop(int lane);
  Iteration run_iteration(int64_t iteration, int lane);
  // Runs nodes [0, count) for `batch` samples. With `prepared` (the main pass), mixed nodes fed
  // only by this stage do their host part too. With `states` (lanes), each shared operator's
  // save_state() right after its run.
  std::vector<std::vector<Batch>> run_nodes(size_t count, int batch, int64_t iteration,
                                            SampleReplacement& replacement,
                                            std::vector<std::shared_ptr<void>>* prepared,
                                            std::vector<std::optional<std::string>>* states,
                                            int lane);
  bool prepares_on_host(size_t n) const;
  // The operator lane `lane` runs for node n: its own copy, or the shared one (in turns).
  ops::Operator& lane_op(int lane, size_t n) {
    return lane > 0 && lane_ops_[size_t(lane - 1)][n] ? *lane_ops_[size_t(lane - 1)][n]
                                                      : *ctx_.ops[n];
  }
  // Shared cpu operators (readers) take turns; the device stages' are not run by the lanes.
  bool takes_turns(size_t n) const {
    return !lane_ops_.empty() && !lane_ops_[0][n] &&
           ctx_.graph.nodes[n].backend == ops::Backend::kCpu;
  }
  bool wait_turn(size_t n, int64_t iteration);  // false: the stage is stopping
  void pass_turn(size_t n, int64_t iteration);

  const StageContext& ctx_;
  Checkpointer& checkpoints_;
  IterationQueue& out_;
  const bool feeds_device_;
  const std::vector<char> pinned_outputs_;
  const int id_;
  int lanes_ = 1;
  // Per lane after the first, per node: the lane's own operator, or null where lanes share one.
  std::vector<std::vector<std::unique_ptr<ops::Operator>>> lane_ops_;
  std::vector<std::thread> threads_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool begun_ = false, stopped_ = false;
  // The next iteration to start. One lane: it advances when an iteration succeeds (an external
  // source's end of epoch takes none); lanes take theirs as they start.
  int64_t next_iteration_;
  std::vector<int64_t> node_turn_;  // lanes: node n may run iteration node_turn_[n]
};

}  // namespace stoker::pipeline
