// stoker's public C++ API: build a pipeline from operators (PipelineBuilder) and run it
// (Pipeline). The Python layer builds its pipelines through the same API.
//
//   stoker::PipelineBuilder b({.batch_size = 32, .num_threads = 4, .seed = 42});
//   auto read = b.add("readers.file", {}, {{"file_root", std::string("/data/train")},
//                                          {"random_shuffle", true}});
//   auto img = b.add("decoders.image", {read[0]});
//   auto out = b.add("random_resized_crop", {img[0]},
//                    {{"size", std::vector<int64_t>{224, 224}}});
//   b.set_outputs({out[0], read[1]});
//   auto pipe = b.build();
//   std::vector<stoker::Batch> batch = pipe->run();
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker {

using ops::ArgValue;
using ops::ReaderMeta;

struct PipelineOptions {
  int batch_size = 1;
  int num_threads = 1;  // threads for per-sample work (the caller's counts)
  // num_threads="auto": num_threads is then the most threads the pipeline may use (a CPU
  // budget, so the training process keeps its cores); it starts at min(4, num_threads) and
  // adjusts while running: more while the consumer waits for batches and more helps, fewer
  // while it does not. Outputs do not depend on it.
  bool auto_threads = false;
  std::optional<int> device_id;  // none: CPU-only
  int64_t seed = -1;             // -1: drawn from std::random_device
  int prefetch_queue_depth = 2;  // batches prepared ahead by the CPU stage ("cpu_size")
  // prefetch_queue_depth="auto": the queue of finished batches the consumer takes from (the
  // GPU stage's with device stages, else the CPU stage's) starts at its depth above and grows
  // by one (up to 6) when the consumer waits while the stage filling it was blocked on it.
  bool auto_prefetch = false;
  int gpu_queue_depth = 2;          // finished GPU-stage batches held ("gpu_size")
  size_t device_memory_budget = 0;  // bytes; 0: unlimited
  size_t host_memory_budget = 0;    // bytes; 0: unlimited
  std::string checkpoint;           // Pipeline::checkpoint() text to resume from
  // "raise": a bad sample fails the batch (default). "skip": a sample whose reading or
  // decoding fails with a data error is replaced by the reader's next sample; incidents are
  // counted (error_stats()).
  std::string on_error = "raise";
  // CPU outputs in page-locked (pinned) host memory, so copies to a GPU (a framework's
  // .cuda(non_blocking=True)) are asynchronous DMA; needs CUDA (pageable memory otherwise).
  bool pinned_outputs = false;
  // A Chrome/Perfetto trace (JSON: a track per stage thread, a span per operator run) written
  // here when the pipeline closes; "": the STOKER_TRACE environment variable's path, if set.
  std::string trace;
  // The cores the pipeline's threads may run on (empty: any). Every thread the pipeline starts
  // (its stages, pools, readers' I/O threads, and nvJPEG's or CUDA's started meanwhile) is
  // restricted to them; keeping them off the training thread's core keeps that thread prompt.
  std::vector<int> cpu_affinity;
};

struct ErrorStats {
  int64_t skipped = 0;              // samples replaced since the start
  int64_t warnings = 0;             // samples used despite a warning (corrupt JPEG data)
  std::vector<std::string> recent;  // the last incidents: operator, sample, source, error
};

// A value in the graph: output `output` of node `node`.
struct Value {
  int node = -1;
  int output = 0;
};

struct NodeOptions {
  std::string name;  // unique; generated when empty
  std::string device = "cpu";
  std::string defined_at;  // where the user defined it, for error messages
};

class Pipeline;

class PipelineBuilder {
 public:
  explicit PipelineBuilder(PipelineOptions options);
  ~PipelineBuilder();

  // Adds operator `op`. Arguments are validated against its schema here; errors name the
  // operator and `node.defined_at`. Returns one Value per operator output.
  std::vector<Value> add(const std::string& op, const std::vector<Value>& inputs = {},
                         const std::map<std::string, ArgValue>& args = {},
                         const std::map<std::string, Value>& arg_inputs = {},
                         const NodeOptions& node = {});
  void set_outputs(const std::vector<Value>& outputs);
  // Validates, prunes nodes that no output depends on, and creates the operators.
  std::unique_ptr<Pipeline> build();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct MemoryStats {
  PoolStats host;
  PoolStats device;
  PoolStats pinned;
};

class Pipeline {
 public:
  // A pipeline from Python's pipe.serialize() JSON (schema "stoker.pipeline", version 1):
  // its options, operators and outputs, built as PipelineBuilder would. `adjust`, when given,
  // may change the saved options first (device_id, num_threads, checkpoint...). Throws
  // ValueError naming the node for a document it cannot use, and the builder's errors.
  static std::unique_ptr<Pipeline> from_json(
      const std::string& json, const std::function<void(PipelineOptions&)>& adjust = {});

  ~Pipeline();  // stops the prefetching thread; never hangs, even mid-epoch
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // The next batch (one Batch per pipeline output). Starts prefetching on the first call.
  // Throws EndOfData when an external source ended its epoch, or the error of the failed
  // iteration (operator, sample, source in the message). After an error the pipeline stays
  // stopped and every later run() throws RuntimeError. While it waits, `interrupted` (when
  // given) is called every 50 ms; when it returns true, run() throws Interrupted and the batch
  // stays for the next call.
  std::vector<Batch> run(const std::function<bool()>& interrupted = {});
  // Stops the pipeline now: threads joined, device work finished, operators destroyed (what
  // the destructor does). Later calls to run() throw RuntimeError. Python calls it at exit,
  // before other libraries tear CUDA down.
  void close();

  // Feeds external source `name` (its batch must hold batch_size samples). The pipeline keeps
  // `batch` (its buffers stay alive until the pipeline is done with them: memory borrowed with
  // Buffer::wrap must stay unchanged until released); with `copy`, it copies the data now
  // instead, so the caller may reuse its memory when this returns. Device data must be complete
  // by its ready_event() or by the work queued on feed_stream() before this call.
  void feed_input(const std::string& name, Batch batch, bool copy = false);
  // The stream producers of device data order their work before (e.g. DLPack's `stream`
  // argument); null when the pipeline runs nothing on the GPU.
  StreamHandle feed_stream() const;
  // Marks the end of external source `name`'s data: the iteration needing more ends the epoch.
  void feed_end(const std::string& name);
  std::vector<std::string> external_source_names() const;
  std::vector<std::string> reader_names() const;

  // Metadata of reader `name` (empty: the only reader). Throws ValueError when unknown.
  ReaderMeta reader_meta(const std::string& name = "") const;

  // The state after the last batch run() returned: a pipeline built with
  // PipelineOptions::checkpoint set to it yields exactly the batches this one yields next.
  // Covers readers and random operators, not external sources.
  std::string checkpoint() const;

  ErrorStats error_stats() const;
  // The counters of operator `name` (Operator::stats()); ValueError when unknown.
  std::map<std::string, double> operator_stats(const std::string& name) const;
  // Incidents (skipped samples) since the last call.
  std::vector<std::string> take_incidents();
  // Per stage ("cpu", "mixed", "gpu", then "consumer"): iterations and seconds busy, starved
  // (waiting for the stage before) and blocked (waiting for room after), since the start; the
  // mean length of the stage's output queue when the consumer came (of queue_capacity), and the
  // CPU seconds of the stage's thread (threads: the CPU stage's lanes, whose busy, starved and
  // blocked seconds are their means; see executor_lanes.cpp).
  struct StageTimes {
    std::string name;
    int64_t iterations = 0;
    double busy = 0, starved = 0, blocked = 0;
    double queue_mean = 0;
    int queue_capacity = 0;
    double cpu = 0;
    int threads = 1;
  };
  std::vector<StageTimes> stage_stats() const;
  // CPU seconds of stoker's threads by group ("cpu stage", "mixed stage", "gpu stage",
  // "workers", "gpu stage workers") and the seconds since the first run(): their sum over
  // `wall` is the cores the pipeline keeps busy (not counting the readers' I/O threads or the
  // CUDA driver's).
  struct CpuTimes {
    std::vector<std::pair<std::string, double>> threads;
    double wall = 0;
  };
  CpuTimes cpu_times() const;
  // Per operator (graph order, fused operators as the one that does their work): runs,
  // samples, seconds of its stage's thread (mixed/gpu operators: the host's part), bytes in
  // and out, since the start; mixed/gpu operators: the GPU time of the runs the GPU finished
  // (CUDA events on the stage's stream around each run).
  struct OperatorTimes {
    std::string name, op, backend;
    int64_t runs = 0, samples = 0;
    double seconds = 0;
    int64_t bytes_in = 0, bytes_out = 0;
    int64_t gpu_runs = 0;
    double gpu_seconds = 0;
  };
  std::vector<OperatorTimes> operator_times() const;
  // num_threads="auto": the threads working now, and each change the tuner made (seconds of
  // measured windows since the start, the new count, the images/s and the consumer's share of
  // waiting measured before it, and why); prefetch_queue_depth="auto": likewise the depth.
  struct AutotuneChange {
    double time = 0;
    int threads = 0;
    double rate = 0, wait = 0;
    std::string why;
  };
  struct PrefetchChange {
    double time = 0;
    int depth = 0;
    double wait = 0, blocked = 0;  // the consumer's waiting and the stage's blocked shares
    std::string why;
  };
  struct Autotune {
    int threads = 0;
    std::vector<AutotuneChange> changes;
    int prefetch_depth = 0;  // the consumer's queue now
    std::vector<PrefetchChange> prefetch_changes;
  };
  Autotune autotune() const;
  // The GPU's utilisation sampled through NVML every 100 ms since the first run() (pipelines
  // with GPU stages, where the driver's NVML is available; else `why`): the mean share of time
  // kernels ran (SM) and the JPEG engines were busy (NVJPG; -1 where NVML has no counter).
  // The whole GPU's, not only this pipeline's work.
  struct GpuStats {
    bool available = false;
    std::string why;
    int64_t samples = 0;
    double sm_percent = 0, nvjpg_percent = -1;
  };
  GpuStats gpu_utilization() const;

  const PipelineOptions& options() const;
  uint64_t seed() const;
  int num_outputs() const;
  MemoryStats memory_stats() const;
  // Returns the pools' cached free blocks (host, pinned, device) to the system; buffers in use
  // stay. The pools grow again as needed.
  void trim_memory();

 private:
  friend class PipelineBuilder;
  struct Impl;
  explicit Pipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker
