// What the executor's stages report while they run, in one place: per-stage times (busy,
// starved, blocked), per-operator times and GPU times, the queues' depths seen by the consumer,
// skipped samples and warnings, and the trace. Stages only report; the executor reads the
// totals for Pipeline's statistics and the tuners. Thread safe (one lock, held for a few adds).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/ops/op_spec.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/pipeline/graph.hpp"
#include "stoker/pipeline/trace.hpp"
#include "stoker/stats.hpp"

namespace stoker::pipeline {

class Telemetry {
 public:
  using Clock = TraceRecorder::Clock;
  // Stage ids are what add_stage() returned; the consumer has its own. `trace_path` "": no trace.
  Telemetry(const Graph& graph, const std::string& trace_path);

  int add_stage(std::string name);
  // A stage waited `starved` seconds for input and `blocked` for room in its output (scaled by
  // `share`: the stage's threads report their mean).
  void stage_waited(int stage, double starved, double blocked, double share = 1.0);
  // A stage finished an iteration in `busy` seconds.
  void stage_ran(int stage, double busy, double share = 1.0);
  double stage_blocked(int stage) const;
  // The consumer waited `waited` seconds for a batch; the queues' lengths it found (per stage).
  void consumer_popped(double waited, const std::vector<size_t>& queue_lengths);
  int64_t consumer_batches() const;
  // Stage statistics without the threads' CPU seconds and queue capacities (the stages know).
  std::vector<StageStats> stages() const;
  StageStats consumer() const;
  // The mean queue length (per stage) the consumer saw.
  std::vector<double> queue_means() const;

  // Node n ran (or, `ran` false, did a mixed node's host part) from `start` until now.
  void count_run(size_t n, const ops::Workspace& ws, bool ran, Clock::time_point start);
  // Node n's GPU time of one run; `span_start`/`span_end` its host-clock place in the trace
  // (when the stream has a trace track).
  void gpu_run(size_t n, double seconds, int track, int64_t iteration,
               Clock::time_point span_start, Clock::time_point span_end);
  std::vector<OperatorTimes> operator_times() const;

  // on_error="skip" replaced these samples of `spec`; warnings about samples used anyway.
  void samples_skipped(const ops::OpSpec& spec, const std::map<int, std::string>& failed);
  void samples_warned(const ops::OpSpec& spec, const std::map<int, std::string>& warned);
  ErrorStats error_stats() const;
  std::vector<std::string> take_incidents();

  // The trace, or null. Spans are written when the recorder is destroyed (write_trace()).
  TraceRecorder* trace() const { return trace_.get(); }
  void write_trace() const;

 private:
  static constexpr size_t kRecentIncidents = 20;
  mutable std::mutex mutex_;
  std::vector<StageStats> stages_;
  StageStats consumer_{"consumer"};
  std::vector<double> queue_sums_;
  int64_t queue_samples_ = 0;
  std::vector<OperatorTimes> op_times_;
  int64_t skipped_ = 0, warnings_ = 0;
  std::vector<std::string> recent_, incidents_;
  std::unique_ptr<TraceRecorder> trace_;
};

inline double seconds_since(TraceRecorder::Clock::time_point t) {
  return std::chrono::duration<double>(TraceRecorder::Clock::now() - t).count();
}

}  // namespace stoker::pipeline
