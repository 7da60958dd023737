// Executor: runs a validated graph as pipelined stages and wires them together. It owns what
// the stages share (operators, memory pools, the thread pool, telemetry, checkpoints) and:
//
//   CpuStage --queue--> DeviceStage "mixed" --queue--> DeviceStage "gpu" --queue--> pop()
//
// (the device stages the graph has; without them the CPU stage feeds the consumer's queue).
// The CPU stage's queue holds prefetch_queue_depth iterations, one waits between device stages,
// the consumer's holds gpu_queue_depth (both as tuned with "auto"). Data flows CPU -> mixed ->
// gpu only, so the stage order is always valid. A new stage (video decoding) is a Stage placed
// in this chain (stage.hpp).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stoker/core/gpu_monitor.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/options.hpp"
#include "stoker/pipeline/checkpointer.hpp"
#include "stoker/pipeline/cpu_stage.hpp"
#include "stoker/pipeline/device_stage.hpp"
#include "stoker/pipeline/graph.hpp"
#include "stoker/pipeline/iteration_queue.hpp"
#include "stoker/pipeline/telemetry.hpp"
#include "stoker/pipeline/tuning.hpp"
#include "stoker/stats.hpp"

namespace stoker::pipeline {

class Executor {
 public:
  // `options` as PipelineBuilder resolved them: seed >= 0, num_threads the pool's size.
  Executor(Graph graph, const PipelineOptions& options);
  ~Executor();

  // Blocks for the next iteration's outputs. Throws EndOfData at the end of an external
  // source's epoch, or the failed iteration's error (with operator context). While waiting,
  // `interrupted` (when given) is called every 50 ms without the executor's locks; when it
  // returns true, pop() throws Interrupted and the batch stays queued.
  std::vector<Batch> pop(const std::function<bool()>& interrupted = {});
  // Stops the stages and wakes a pop() waiting on another thread (it throws "the pipeline was
  // closed"); the destructor then frees the rest.
  void close() { stop(); }

  const Graph& graph() const { return graph_; }
  ops::Operator& op(int node) { return *ops_[size_t(node)]; }
  const ops::Operator& op(int node) const { return *ops_[size_t(node)]; }
  PoolStats host_stats() const { return host_pool_.stats(); }
  PoolStats device_stats() const { return device_pool_ ? device_pool_->stats() : PoolStats{}; }
  PoolStats pinned_stats() const { return pinned_pool_ ? pinned_pool_->stats() : PoolStats{}; }
  bool has_gpu_stage() const { return !device_stages_.empty(); }
  // Data fed from outside (external sources). feed_stream(): the stream whose work fed device
  // data is ordered before (producers make it wait for theirs, e.g. DLPack's `stream`); null
  // without device stages. copy_input(): a copy of `in` in this executor's memory, complete when
  // it returns, so the caller may reuse its buffers at once.
  StreamHandle feed_stream() const { return feed_stream_ ? feed_stream_->get() : nullptr; }
  Batch copy_input(const Batch& in);
  void trim_memory();
  // The state after the last batch pop() returned (before the first: the starting state).
  Checkpoint checkpoint() const { return checkpoints_.last_delivered(); }
  ErrorStats error_stats() const { return telemetry_.error_stats(); }
  std::vector<StageStats> stage_stats() const;
  std::vector<OperatorTimes> operator_times() const { return telemetry_.operator_times(); }
  CpuTimes cpu_times() const;
  // The threads working now and the consumer's queue depth now, with the tuners' changes.
  Autotune autotune() const { return tuning_->autotune(); }
  // The GPU's utilisation (NVML) since the first pop(), for pipelines with device stages.
  GpuUtilization gpu_utilization() const;
  // Incidents since the last call (for warnings in Python).
  std::vector<std::string> take_incidents() { return telemetry_.take_incidents(); }

 private:
  void make_operators();
  void start_threads();  // the stages' threads; on failure none is left running
  std::vector<char> pinned_outputs() const;
  void stop();

  Graph graph_;
  PipelineOptions options_;
  int device() const { return options_.device_id.value_or(-1); }
  std::vector<std::unique_ptr<ops::Operator>> ops_;
  MemoryPool host_pool_;
  ThreadPool thread_pool_;
  std::unique_ptr<MemoryPool> device_pool_, pinned_pool_;
  std::unique_ptr<CudaStream> feed_stream_;  // with device stages
  std::unique_ptr<GpuMonitor> gpu_monitor_;  // with device stages; started by the first pop()
  Telemetry telemetry_;
  Checkpointer checkpoints_;
  // stop(), readable by running operators: they skip their remaining samples, so that closing
  // a pipeline does not wait for a slow batch to finish.
  std::atomic<bool> stopping_{false};
  std::unique_ptr<StageContext> context_;
  // queues_[0] is the CPU stage's output; queues_[k + 1] device stage k's; the last the
  // consumer's.
  std::vector<std::unique_ptr<IterationQueue>> queues_;
  std::unique_ptr<CpuStage> cpu_stage_;
  std::vector<std::unique_ptr<DeviceStage>> device_stages_;  // mixed, then gpu
  std::unique_ptr<Tuning> tuning_;
  // The first pop(): written once by the consumer before started_ is set.
  std::atomic<bool> started_{false};
  Telemetry::Clock::time_point start_time_;
};

}  // namespace stoker::pipeline
