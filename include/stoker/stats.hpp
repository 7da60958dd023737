// What a running pipeline measures, one type per kind: the executor produces them, Pipeline
// returns them, and Python converts every one through its fields() (f(name, member)), the
// names being the keys of the Python dicts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stoker/core/gpu_monitor.hpp"
#include "stoker/core/memory.hpp"

namespace stoker {

struct ErrorStats {
  int64_t skipped = 0;              // samples replaced since the start (on_error="skip")
  int64_t warnings = 0;             // samples used despite a warning (corrupt JPEG data)
  std::vector<std::string> recent;  // the last incidents: operator, sample, source, error
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("skipped", s.skipped), f("warnings", s.warnings), f("recent", s.recent);
  }
};

// Where one stage's thread spent its time since the start (seconds): running its operators
// (busy), waiting for an iteration from the stage before (starved), waiting for room in the
// queue after it (blocked). The consumer's entry: waiting in run() (starved).
struct StageStats {
  std::string name;  // "cpu", "mixed", "gpu" or "consumer"
  int64_t iterations = 0;
  double busy = 0, starved = 0, blocked = 0;
  // The stage's output queue as the consumer found it at each run(): the mean number of
  // finished iterations waiting there, and its capacity (0 for the consumer).
  double queue_mean = 0;
  int queue_capacity = 0;
  double cpu = 0;   // CPU seconds of the stage's thread (the consumer: none counted)
  int threads = 1;  // the CPU stage's lanes (their mean busy and blocked seconds)
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("stage", s.name), f("iterations", s.iterations), f("busy", s.busy),
        f("starved", s.starved), f("blocked", s.blocked), f("queue_mean", s.queue_mean),
        f("queue_capacity", s.queue_capacity), f("cpu", s.cpu), f("threads", s.threads);
  }
};

// CPU seconds of stoker's threads since the first run(), by group ("cpu stage", "mixed stage",
// "gpu stage", "workers", "gpu stage workers"), and the seconds since then: their sum over
// `wall` is the cores the pipeline keeps busy (readers' I/O threads, the CUDA driver's and
// nvJPEG's are not counted).
struct CpuTimes {
  std::vector<std::pair<std::string, double>> threads;
  double wall = 0;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("threads", s.threads), f("wall", s.wall);
  }
};

// Per operator since the start (graph order; fused operators as the one that does their
// work): runs and samples, the seconds its stage's thread spent in it (mixed and gpu operators:
// the host's part), the bytes of its inputs and outputs; mixed and gpu operators: the GPU time
// of the runs the GPU has finished (CUDA events around each run), so gpu_runs may trail runs.
struct OperatorTimes {
  std::string name, op, backend;
  int64_t runs = 0, samples = 0;
  double seconds = 0;
  int64_t bytes_in = 0, bytes_out = 0;
  int64_t gpu_runs = 0;
  double gpu_seconds = 0;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("name", s.name), f("op", s.op), f("backend", s.backend), f("runs", s.runs),
        f("samples", s.samples), f("seconds", s.seconds), f("bytes_in", s.bytes_in),
        f("bytes_out", s.bytes_out), f("gpu_runs", s.gpu_runs), f("gpu_seconds", s.gpu_seconds);
  }
};

// A change num_threads="auto" made: at `time` (seconds of measured windows) to `threads`,
// because of `why`, having measured `rate` images/s and the consumer waiting a share `wait`.
struct ThreadChange {
  double time = 0;
  int threads = 0;
  double rate = 0, wait = 0;
  std::string why;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("time", s.time), f("threads", s.threads), f("rate", s.rate), f("wait", s.wait),
        f("why", s.why);
  }
};

// A change prefetch_queue_depth="auto" made: the consumer's waiting and the feeding stage's
// blocked shares before it.
struct DepthChange {
  double time = 0;
  int depth = 0;
  double wait = 0, blocked = 0;
  std::string why;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("time", s.time), f("depth", s.depth), f("wait", s.wait), f("blocked", s.blocked),
        f("why", s.why);
  }
};

struct Autotune {
  int threads = 0;  // working now
  std::vector<ThreadChange> changes;
  int prefetch_depth = 0;  // the consumer's queue now
  std::vector<DepthChange> prefetch_changes;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("threads", s.threads), f("changes", s.changes), f("prefetch_queue_depth", s.prefetch_depth),
        f("prefetch_changes", s.prefetch_changes);
  }
};

struct MemoryStats {
  PoolStats host, device, pinned;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("host", s.host), f("device", s.device), f("pinned", s.pinned);
  }
};

}  // namespace stoker
