#include "stoker/pipeline/gpu_timer.hpp"

#include <chrono>
#include <cstdio>

namespace stoker::pipeline {

void GpuTimer::add_trace_track(const std::string& name, int device) {
  auto* trace = telemetry_.trace();
  if (!trace) return;
  try {
    DeviceGuard guard(device);
    auto anchor = std::make_unique<CudaEvent>(/*timing=*/true);
    anchor->record(stream_.get());
    anchor->synchronize();
    anchor_time_ = Telemetry::Clock::now();
    anchor_ = std::move(anchor);
    track_ = trace->add_track(name);
  } catch (const std::exception& e) {  // the trace goes without GPU spans
    std::fprintf(stderr, "stoker: no GPU spans in the trace: %s\n", e.what());
  }
}

std::unique_ptr<CudaEvent> GpuTimer::mark() {
  std::unique_ptr<CudaEvent> e;
  if (spare_.empty()) {
    e = std::make_unique<CudaEvent>(/*timing=*/true);
  } else {
    e = std::move(spare_.back());
    spare_.pop_back();
  }
  e->record(stream_.get());
  return e;
}

void GpuTimer::ran(size_t n, int64_t iteration, std::unique_ptr<CudaEvent> start) {
  runs_.push_back({n, iteration, std::move(start), mark()});
}

void GpuTimer::collect() {
  using Seconds = std::chrono::duration<double>;
  auto host_time = [&](const CudaEvent& e) {
    return anchor_time_ + std::chrono::duration_cast<Telemetry::Clock::duration>(
                              Seconds(elapsed_seconds(*anchor_, e)));
  };
  while (!runs_.empty() && runs_.front().end->done()) {
    auto& r = runs_.front();
    const double seconds = elapsed_seconds(*r.start, *r.end);
    if (anchor_)
      telemetry_.gpu_run(r.node, seconds, track_, r.iteration, host_time(*r.start),
                         host_time(*r.end));
    else
      telemetry_.gpu_run(r.node, seconds, -1, r.iteration, {}, {});
    spare_.push_back(std::move(r.start));
    spare_.push_back(std::move(r.end));
    runs_.pop_front();
  }
}

}  // namespace stoker::pipeline
