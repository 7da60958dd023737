// Executor: runs a validated graph in up to three pipelined stages, each on its own thread. The
// CPU stage runs the cpu operators of each iteration in graph order, samples in parallel on the
// thread pool, up to `prefetch_queue_depth` iterations ahead. The mixed stage (decoders, copies
// to the device) and the gpu stage (kernels) each have their own CUDA stream; an iteration
// moves on with an event, so the mixed stage decodes iteration i+1 while the gpu stage plans
// and launches the kernels of iteration i, and nothing waits for the GPU on the host. Device
// outputs carry the last event for the consumer; up to `gpu_queue_depth` finished iterations
// wait for it. (Data flows CPU -> mixed -> gpu only, so the stage order is always valid.)
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "stoker/core/gpu_monitor.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/pipeline/autotune.hpp"
#include "stoker/pipeline/checkpoint.hpp"
#include "stoker/pipeline/graph.hpp"
#include "stoker/pipeline/trace.hpp"
#include "stoker/options.hpp"
#include "stoker/stats.hpp"

namespace stoker::pipeline {

class Executor {
 public:
  // `options` as PipelineBuilder resolved them: seed >= 0, trace the path to write (or ""),
  // num_threads the pool's size.
  Executor(Graph graph, const PipelineOptions& options);
  ~Executor();

  // Blocks for the next iteration's outputs. Throws EndOfData at the end of an external
  // source's epoch, or the failed iteration's error (with operator context).
  // The next batch. While waiting, `interrupted` (when given) is called every 50 ms without the
  // executor's lock; when it returns true, pop() throws Interrupted and the batch stays queued.
  std::vector<Batch> pop(const std::function<bool()>& interrupted = {});

  const Graph& graph() const { return graph_; }
  ops::Operator& op(int node) { return *ops_[size_t(node)]; }
  const ops::Operator& op(int node) const { return *ops_[size_t(node)]; }
  PoolStats host_stats() const { return host_pool_.stats(); }
  PoolStats device_stats() const { return device_pool_ ? device_pool_->stats() : PoolStats{}; }
  PoolStats pinned_stats() const { return pinned_pool_ ? pinned_pool_->stats() : PoolStats{}; }
  bool has_gpu_stage() const { return !stages_.empty(); }
  // Data fed from outside (external sources). feed_stream(): the stream whose work fed device
  // data is ordered before (producers make it wait for theirs, e.g. DLPack's `stream`); null
  // without device stages. copy_input(): a copy of `in` in this executor's memory, complete when
  // it returns (device data after the work on feed_stream() before it), so the caller may reuse
  // its buffers at once.
  StreamHandle feed_stream() const { return feed_stream_ ? feed_stream_->get() : nullptr; }
  Batch copy_input(const Batch& in);
  void trim_memory() {
    host_pool_.trim();
    if (pinned_pool_) pinned_pool_->trim();
    if (device_pool_) device_pool_->trim();
  }
  // The state after the last batch pop() returned (before the first: the starting state).
  Checkpoint checkpoint() const;
  ErrorStats error_stats() const;
  std::vector<StageStats> stage_stats() const;
  std::vector<OperatorTimes> operator_times() const;
  CpuTimes cpu_times() const;
  // The threads working now and the consumer's queue depth now, with the tuners' changes
  // (num_threads="auto", prefetch_queue_depth="auto"; empty otherwise).
  Autotune autotune() const;
  // The GPU's utilisation (NVML) since the first pop(), for pipelines with device stages.
  GpuUtilization gpu_utilization() const;
  // Incidents since the last call (for warnings in Python).
  std::vector<std::string> take_incidents();

 private:
  struct Result {
    Checkpoint after;  // the state once this iteration was produced
    std::vector<Batch> outputs;
    bool end_of_data = false;
    std::exception_ptr error;
    // Between the stages: every node's values (later stages' still empty), the iteration and
    // the event after the previous device stage's work.
    std::vector<std::vector<Batch>> values;
    int64_t iteration = 0;
    std::shared_ptr<CudaEvent> ready;
    std::vector<std::shared_ptr<void>> prepared;  // per node: prepare_on_host()'s result
  };
  struct DeviceStage {
    std::vector<size_t> nodes;
    std::unique_ptr<CudaStream> stream;
    // The gpu stage plans (filter tables, windows) on a few threads of its own, so it never
    // waits for the pool the CPU and mixed stages keep busy. Null: the pipeline's pool.
    std::unique_ptr<ThreadPool> pool;
    std::deque<Result> input;
    std::thread thread;
    StageStats stats;  // under mutex_
    // Each node run's CUDA events, oldest first, read once the GPU passed them (stage thread,
    // then the destructor); spare events are reused.
    struct GpuRun {
      size_t node;
      int64_t iteration;
      std::unique_ptr<CudaEvent> start, end;
    };
    std::deque<GpuRun> gpu_runs;
    std::vector<std::unique_ptr<CudaEvent>> spare_events;
    // The trace's track of this stream, and the host time when `anchor` finished on the GPU:
    // GPU spans are placed at anchor_time + elapsed(anchor, event).
    int trace_track = -1;
    std::unique_ptr<CudaEvent> anchor;
    TraceRecorder::Clock::time_point anchor_time;
  };
  // pop()'s part for the tuners (under mutex_): the consumer waited `waited` seconds for
  // this batch and found `queued` finished ones.
  void tune(double waited, size_t queued);
  // The CPU stage's thread of lane `lane` (executor_lanes.cpp).
  void producer_loop(int lane);
  void device_loop(size_t stage);
  // Runs the CPU stage's nodes for `iteration` on lane `lane`.
  Result run_iteration(int64_t iteration, int lane = 0);
  // One device stage's nodes for one iteration, on its stream; the last stage fills r.outputs.
  void run_device_stage(size_t stage, Result& r);
  // Hands a finished result to the consumer (or, from the CPU stage, to the GPU stage). With
  // `in_order` (CPU lanes), after the results of the iterations before r's.
  bool deliver(Result r, std::deque<Result>& to, bool in_order = false);
  // CPU lanes (executor_lanes.cpp): how many, and the turns that keep every node's iterations
  // in order: node n may run iteration node_turn_[n] (under mutex_).
  int choose_lanes() const;
  void make_lane_operators();
  // The operator lane `lane` runs for node n: its own copy, or the shared one (in turns).
  ops::Operator& lane_op(int lane, size_t n) {
    return lane > 0 && lane_ops_[size_t(lane - 1)][n] ? *lane_ops_[size_t(lane - 1)][n] : *ops_[n];
  }
  bool wait_turn(size_t n, int64_t iteration);  // false: the executor is stopping
  void pass_turn(size_t n, int64_t iteration);
  // Runs nodes [0, count) for `batch` samples (replacement round `round`). With
  // skip_bad_samples, samples that fail with a data error are replaced by running the nodes
  // before and including the failing one again (recursively) for as many new samples.
  // With `prepared` (the main pass), mixed nodes fed only by the CPU stage do their host work
  // too (prepare_on_host); a replacement drops what earlier nodes prepared (their batch changed).
  // With `states` (CPU lanes), each node's save_state() right after its run, for the
  // iteration's checkpoint.
  std::vector<std::vector<Batch>> run_nodes(
      size_t count, int batch, int64_t iteration, uint32_t& round, int64_t& replaced,
      std::vector<std::shared_ptr<void>>* prepared = nullptr,
      std::vector<std::optional<std::string>>* states = nullptr, int lane = 0);
  // Whether node n is a mixed node whose inputs all come from the CPU stage.
  bool prepares_on_host(size_t n) const;
  void record_skips(const ops::OpSpec& spec, const std::map<int, std::string>& failed);
  void record_warnings(const ops::OpSpec& spec, const std::map<int, std::string>& warned);
  // Adds the time since `start` of node n's thread to operator_times() (and the trace), and
  // when it `ran` (not only prepared on the host) one run with the samples and bytes of `ws`.
  void count_run(size_t n, const ops::Workspace& ws, bool ran,
                 TraceRecorder::Clock::time_point start);
  // A timing event recorded on stage st's stream now (a spare one when there is one).
  std::unique_ptr<CudaEvent> record_timing(DeviceStage& st);
  // Adds the GPU time of stage st's node runs the GPU has finished to operator_times() and the
  // trace (stage thread; the destructor once the threads are gone).
  void collect_gpu_times(DeviceStage& st);
  // The checkpoint after `iteration` - 1: the operators' states now (one lane: producer
  // thread only, or before it starts), or those `states` taken at their runs (CPU lanes).
  Checkpoint snapshot(int64_t iteration,
                      const std::vector<std::optional<std::string>>* states = nullptr) const;
  // Seconds since t (the stages' statistics).
  static double seconds_since(TraceRecorder::Clock::time_point t) {
    return std::chrono::duration<double>(TraceRecorder::Clock::now() - t).count();
  }
  void restore(const std::string& text);

  Graph graph_;
  PipelineOptions options_;
  int device() const { return options_.device_id.value_or(-1); }
  bool skip_bad_samples() const { return options_.on_error == "skip"; }
  std::vector<std::unique_ptr<ops::Operator>> ops_;
  MemoryPool host_pool_;
  ThreadPool thread_pool_;
  std::vector<DeviceStage> stages_;  // mixed, then gpu (those the graph has)
  std::unique_ptr<MemoryPool> device_pool_, pinned_pool_;
  std::unique_ptr<CudaStream> feed_stream_;  // with device stages
  std::unique_ptr<GpuMonitor> gpu_monitor_;  // with device stages; started by the first pop()
  // CPU nodes whose outputs a mixed operator reads: they allocate from the pinned pool, so the
  // device reads them by DMA without a staging copy (nvJPEG's hardware decoder, transfers).
  std::vector<char> pinned_outputs_;
  StageStats cpu_stats_{"cpu"}, consumer_stats_{"consumer"};  // under mutex_
  std::vector<OperatorTimes> op_times_;                       // per node, under mutex_
  std::unique_ptr<TraceRecorder> trace_;                      // with options.trace_path
  int64_t iteration_ = 0;  // the next iteration the CPU stage starts (lanes: under mutex_)
  // CPU lanes: with several, each runs whole iterations on its own thread (lane 0: producer_),
  // taking the next one when it finishes, all sharing the pool (concurrent calls), so that one
  // iteration's serial parts and batch end are filled with another's samples. Only for
  // pipelines without device stages, external sources or on_error="skip" (executor_lanes.cpp).
  int lanes_ = 1;
  std::vector<std::thread> lane_threads_;
  std::vector<int64_t> node_turn_;
  // Per lane after the first, per node: the lane's own operator (a stateless one: the same
  // results from the same workspace), or null where the lanes share one that keeps state (a
  // reader) and take turns with it.
  std::vector<std::vector<std::unique_ptr<ops::Operator>>> lane_ops_;
  std::condition_variable turn_changed_;
  int64_t next_delivery_ = 0;  // the iteration whose result is delivered next (under mutex_)

  static constexpr int kMaxSkipsPerBatch = 4;  // give up beyond 4 x batch_size replacements
  static constexpr size_t kRecentIncidents = 20;
  mutable std::mutex mutex_;
  Checkpoint delivered_;
  int64_t skipped_ = 0, warnings_ = 0;
  std::vector<std::string> recent_, incidents_;
  std::condition_variable changed_;
  std::deque<Result> queue_;  // finished iterations for the consumer
  bool started_ = false;
  TraceRecorder::Clock::time_point start_time_;  // the first pop()
  // Sums of the queues' lengths at each pop(), per stage (cpu, device stages), under mutex_.
  std::vector<double> queue_sums_;
  int64_t queue_samples_ = 0;
  std::unique_ptr<ThreadTuner> tuner_;       // num_threads="auto"; fed by pop(), under mutex_
  std::unique_ptr<DepthTuner> depth_tuner_;  // prefetch_queue_depth="auto"; likewise
  double last_blocked_ = 0;  // the consumer-feeding stage's blocked seconds at the last pop()
  // Queue depths (under mutex_): the CPU stage's output, and the last device stage's.
  int cpu_depth_ = 2, last_depth_ = 2;
  TraceRecorder::Clock::time_point last_pop_;  // when the last pop() returned
  bool stop_ = false;
  // stop_, readable without the lock: running operators skip their remaining samples, so that
  // closing a pipeline does not wait for a slow batch to finish.
  std::atomic<bool> stopping_{false};
  bool failed_ = false;  // the producer stopped after an error
  std::string failure_;
  std::thread producer_;
};

}  // namespace stoker::pipeline
