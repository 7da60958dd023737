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
#include "stoker/ops/schema.hpp"
#include "stoker/options.hpp"
#include "stoker/stats.hpp"

namespace stoker {

using ops::ArgValue;
using ops::ReaderMeta;

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

// One operator node of a pipeline's definition: what Python's tracer records and a serialised
// pipeline holds. Inputs refer to nodes before it, by position in the definition.
struct NodeDef {
  std::string op;
  NodeOptions node;
  std::vector<Value> inputs;
  std::map<std::string, ArgValue> args;
  std::map<std::string, Value> arg_inputs;
};

// A pipeline's whole definition: its options, nodes and outputs. Serialised as JSON
// ({"format": "stoker.pipeline", "version": 2, "options": {...}, "nodes": [{"op", "name",
// "device", "inputs": [[node, output]], "args": {...}, "arg_inputs": {name: [node, output]}}],
// "outputs": [[node, output]]}); the options are PipelineOptions::fields() marked saved, by
// name. Version 1 documents (options at the top level, as Python wrote them) are still read.
struct PipelineDefinition {
  PipelineOptions options;
  std::vector<NodeDef> nodes;
  std::vector<Value> outputs;

  // Throws ValueError naming the field, node or option for a document it cannot use.
  static PipelineDefinition from_json(const std::string& json);
  std::string to_json() const;
  // Built as PipelineBuilder builds it (its errors name the node's defined_at).
  std::unique_ptr<Pipeline> build() const;
};

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

class Pipeline {
 public:
  // A pipeline from a serialised definition (PipelineDefinition, what Python's
  // pipe.serialize() writes). `adjust`, when given, may change the saved options first
  // (device_id, num_threads, checkpoint...).
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
  // The batches the data fed to `name` so far makes, those already run included (one per
  // feed_input for external_source; a fed video makes several): run() asking for more waits for
  // a feed.
  int64_t fed_batches(const std::string& name) const;
  // After an epoch ended (run() threw EndOfData): drops the end marks still queued at the other
  // external sources (every source of the iteration got one; the first to run ended it), so
  // that the next epoch's batches come first.
  void discard_ends();
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
  // Per stage ("cpu", "mixed", "gpu", then "consumer"): where its thread's time went since
  // the start (StageStats).
  std::vector<StageStats> stage_stats() const;
  // CPU seconds of stoker's threads by group and the seconds since the first run().
  CpuTimes cpu_times() const;
  // Per operator, in graph order (OperatorTimes).
  std::vector<OperatorTimes> operator_times() const;
  // The threads working now and (num_threads="auto") each change the tuner made; likewise the
  // consumer's queue depth (prefetch_queue_depth="auto").
  Autotune autotune() const;
  // The GPU's utilisation sampled through NVML every 100 ms since the first run() (pipelines
  // with GPU stages, where the driver's NVML is available; else `why`): the mean share of time
  // kernels ran (SM) and the JPEG engines were busy (NVJPG; -1 where NVML has no counter).
  // The whole GPU's, not only this pipeline's work.
  GpuUtilization gpu_utilization() const;

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
