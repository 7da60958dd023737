// A pipeline's options: one struct that the builder checks, the executor reads, Python binds
// (stoker.PipelineOptions) and serialisation writes and reads, all through fields() below, so
// an option is declared once. Adding one: a member with its default, a line in fields(), the
// code that uses it, and a test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stoker {

struct PipelineOptions {
  int batch_size = 1;
  int num_threads = 1;
  bool auto_threads = false;
  std::optional<int> device_id;
  int64_t seed = -1;
  int prefetch_queue_depth = 2;
  int gpu_queue_depth = 2;
  bool auto_prefetch = false;
  size_t host_memory_budget = 0;
  size_t device_memory_budget = 0;
  std::string on_error = "raise";
  bool pinned_outputs = false;
  std::vector<int> cpu_affinity;
  bool fusion = true;
  int cpu_lanes = 0;
  std::string checkpoint;
  std::string trace;

  // f(name, &PipelineOptions::member, doc, saved) for every option, in this order; `saved`:
  // part of a serialised pipeline's definition (the others are a run's: where to resume, where
  // to write a trace).
  template <typename F>
  static void fields(F&& f) {
    using O = PipelineOptions;
    f("batch_size", &O::batch_size, "Samples per batch (at least 1).", true);
    f("num_threads", &O::num_threads,
      "Threads for per-sample work; with auto_threads the most the pipeline may use (0: the "
      "machine's cores).",
      true);
    f("auto_threads", &O::auto_threads,
      "Adjust the working threads while running (num_threads=\"auto\" in Python): starts at "
      "min(4, num_threads), more while the consumer waits and more helps, fewer while not. "
      "Outputs do not depend on it.",
      true);
    f("device_id", &O::device_id, "The CUDA device of mixed and gpu operators (None: CPU only).",
      true);
    f("seed", &O::seed, "The seed of every random stream (-1: drawn at build).", true);
    f("prefetch_queue_depth", &O::prefetch_queue_depth,
      "Batches the CPU stage prepares ahead (DALI's cpu_size).", true);
    f("gpu_queue_depth", &O::gpu_queue_depth,
      "Finished GPU-stage batches held for the consumer (DALI's gpu_size).", true);
    f("auto_prefetch", &O::auto_prefetch,
      "The consumer's queue grows by one (up to 6) when the consumer waits while the stage "
      "filling it was blocked on it (prefetch_queue_depth=\"auto\" in Python).",
      true);
    f("host_memory_budget", &O::host_memory_budget, "Bytes of host memory (0: unlimited).", true);
    f("device_memory_budget", &O::device_memory_budget, "Bytes of device memory (0: unlimited).",
      true);
    f("on_error", &O::on_error,
      "\"raise\": a bad sample fails the batch. \"skip\": a sample whose reading or decoding "
      "fails with a data error is replaced by the reader's next one and counted.",
      true);
    f("pinned_outputs", &O::pinned_outputs,
      "CPU outputs in page-locked memory, so copies to a GPU are asynchronous DMA (with CUDA).",
      true);
    f("cpu_affinity", &O::cpu_affinity,
      "The cores every thread the pipeline starts may run on (empty: any).", true);
    f("fusion", &O::fusion,
      "Run the chains operators can fuse as one pass (False: every operator on its own; the "
      "outputs are the same within rounding).",
      true);
    f("cpu_lanes", &O::cpu_lanes,
      "Iterations the CPU stage runs at once, sharing the threads so that one batch's serial "
      "parts and end are filled with another's samples (same batches, in order). 0: two on "
      "CPU-only pipelines with 8 or more threads, else one; 1: one; 2: two wherever they "
      "apply (not with device stages, external sources, on_error=\"skip\" or auto_threads).",
      true);
    f("checkpoint", &O::checkpoint, "A Pipeline::checkpoint() text to resume from.", false);
    f("trace", &O::trace,
      "Write a Chrome/Perfetto trace here when the pipeline closes (\"\": the STOKER_TRACE "
      "environment variable's path, if set).",
      false);
  }
};

}  // namespace stoker
