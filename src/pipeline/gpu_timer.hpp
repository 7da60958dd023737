// A device stage's GPU timing: a pair of timing events around each node's run on the stage's
// stream, read once the GPU has passed them (never waited for), reported to the telemetry as
// the operator's GPU time and, with a trace, as a span on the stream's track. Spans are placed
// on the host clock by an anchor event recorded while the stream was idle. Events are reused.
// Used by the stage's thread only (then, once it has ended, by the destructor's finish()).
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/pipeline/telemetry.hpp"

namespace stoker::pipeline {

class GpuTimer {
 public:
  GpuTimer(Telemetry& telemetry, const CudaStream& stream) : telemetry_(telemetry), stream_(stream) {}
  // With a trace: a track for the stream, anchored now (the stream must be idle).
  void add_trace_track(const std::string& name, int device);
  // An event recorded on the stream now, to pass to ran().
  std::unique_ptr<CudaEvent> mark();
  // Node n of `iteration` ran between `start` (from mark()) and now.
  void ran(size_t n, int64_t iteration, std::unique_ptr<CudaEvent> start);
  // Reports the runs the GPU has finished, oldest first.
  void collect();

 private:
  struct Run {
    size_t node;
    int64_t iteration;
    std::unique_ptr<CudaEvent> start, end;
  };
  Telemetry& telemetry_;
  const CudaStream& stream_;
  std::deque<Run> runs_;
  std::vector<std::unique_ptr<CudaEvent>> spare_;
  int track_ = -1;
  std::unique_ptr<CudaEvent> anchor_;
  Telemetry::Clock::time_point anchor_time_;
};

}  // namespace stoker::pipeline
