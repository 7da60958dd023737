// The executor's stages and what they share. A stage runs some of the graph's nodes for each
// iteration on a thread of its own: the CPU stage (cpu_stage.hpp) produces iterations, the
// device stages (device_stage.hpp: mixed, then gpu) take them from a queue, run their nodes on
// their CUDA stream and hand them on. A new kind of stage (a video decoding stage on NVDEC,
// say) is a Stage subclass: it says which nodes it runs and how (process()), and the executor
// places it between two queues; the loop, the waiting, statistics and stopping are Stage's.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/core/thread_pool.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/options.hpp"
#include "stoker/pipeline/graph.hpp"
#include "stoker/pipeline/iteration_queue.hpp"
#include "stoker/pipeline/telemetry.hpp"

namespace stoker::pipeline {

// What every stage's operators run with; owned by the executor, which outlives its stages.
struct StageContext {
  const Graph& graph;
  const PipelineOptions& options;
  std::vector<std::unique_ptr<ops::Operator>>& ops;
  ThreadPool& pool;
  MemoryPool& host_pool;
  MemoryPool* pinned_pool;  // null without CUDA
  MemoryPool* device_pool;  // null without device stages
  Telemetry& telemetry;
  const std::atomic<bool>& stopping;  // the executor is closing

  int device() const { return options.device_id.value_or(-1); }
};

// A workspace for node n reading its inputs from `values` (the iteration's values so far), with
// the context's pools and the iteration's random-stream keys. The caller sets what differs per
// stage (pool, stream, host pool, failure collection).
ops::Workspace make_workspace(const StageContext& ctx, size_t n,
                              const std::vector<std::vector<Batch>>& values, int64_t iteration,
                              int batch_size);

// Samples of node input or output batches on the host whose bytes lie in a mapped file that lost
// pages while they were used (core/mapping_guard.hpp: the pages read as zeros), each with an
// error naming the file. Empty at no cost while no mapping was ever damaged.
std::map<int, std::string> damaged_samples(const ops::Workspace& ws);

// A stage between two queues.
class Stage {
 public:
  Stage(const StageContext& ctx, std::string name);
  virtual ~Stage();
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  // Starts the stage's thread: it takes iterations from `in` while `out` has room, process()es
  // those that do not pass through (failed, end of data) and hands each to `out`. It ends when
  // the queues stop or after handing on a failed iteration.
  void start(IterationQueue& in, IterationQueue& out);
  void join();
  const std::string& name() const { return name_; }
  int telemetry_id() const { return id_; }
  double cpu_seconds() const;

 protected:
  // One iteration's work; may throw (the error travels with the iteration). EndOfData ends the
  // epoch: the iteration goes on as the end of data.
  virtual void process(Iteration& it) = 0;
  // On the stage's thread, before the first iteration (naming its trace tracks, say).
  virtual void begin() {}

  const StageContext& ctx_;

 private:
  void loop(IterationQueue& in, IterationQueue& out);
  std::string name_;
  int id_;
  std::thread thread_;
};

}  // namespace stoker::pipeline
