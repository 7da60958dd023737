// The executor's statistics: errors, stage and operator times, CPU time of its threads, and
// the GPU time of device operators (timing events read once the GPU passed them). Split from
// executor.cpp, which runs the stages.
#include <chrono>
#include <cstdio>

#include "stoker/pipeline/executor.hpp"

namespace stoker::pipeline {
namespace {
using Clock = TraceRecorder::Clock;
}  // namespace

ErrorStats Executor::error_stats() const {
  std::lock_guard lock(mutex_);
  return {skipped_, warnings_, recent_};
}

std::vector<StageStats> Executor::stage_stats() const {
  std::lock_guard lock(mutex_);
  std::vector<StageStats> out{cpu_stats_};
  out[0].cpu = thread_cpu_seconds(producer_);
  for (const auto& t : lane_threads_) out[0].cpu += thread_cpu_seconds(t);
  out[0].threads = lanes_;
  for (const auto& st : stages_) {
    out.push_back(st.stats);
    out.back().cpu = thread_cpu_seconds(st.thread);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    // The CPU stage's queue holds prefetch_queue_depth; between device stages one waits; the
    // last stage's (the consumer's) gpu_queue_depth (both as tuned, when "auto").
    const bool last = i + 1 == out.size();
    out[i].queue_capacity = i == 0 ? cpu_depth_ : last ? last_depth_ : 1;
    if (queue_samples_ > 0) out[i].queue_mean = queue_sums_[i] / double(queue_samples_);
  }
  out.push_back(consumer_stats_);
  return out;
}

CpuTimes Executor::cpu_times() const {
  CpuTimes t;
  std::lock_guard lock(mutex_);
  double cpu_stage = thread_cpu_seconds(producer_);
  for (const auto& l : lane_threads_) cpu_stage += thread_cpu_seconds(l);
  t.threads.emplace_back("cpu stage", cpu_stage);
  for (const auto& st : stages_)
    t.threads.emplace_back(st.stats.name + " stage", thread_cpu_seconds(st.thread));
  t.threads.emplace_back("workers", thread_pool_.workers_cpu_seconds());
  for (const auto& st : stages_)
    if (st.pool)
      t.threads.emplace_back(st.stats.name + " stage workers", st.pool->workers_cpu_seconds());
  // Threads start with the pipeline; the seconds count from there (the first run()).
  t.wall = started_ ? std::chrono::duration<double>(Clock::now() - start_time_).count() : 0.0;
  return t;
}

std::unique_ptr<CudaEvent> Executor::record_timing(DeviceStage& st) {
  std::unique_ptr<CudaEvent> e;
  if (st.spare_events.empty()) {
    e = std::make_unique<CudaEvent>(/*timing=*/true);
  } else {
    e = std::move(st.spare_events.back());
    st.spare_events.pop_back();
  }
  e->record(st.stream->get());
  return e;
}

void Executor::collect_gpu_times(DeviceStage& st) {
  using Seconds = std::chrono::duration<double>;
  auto host_time = [&](const CudaEvent& e) {
    return st.anchor_time +
           std::chrono::duration_cast<Clock::duration>(Seconds(elapsed_seconds(*st.anchor, e)));
  };
  while (!st.gpu_runs.empty() && st.gpu_runs.front().end->done()) {
    auto& g = st.gpu_runs.front();
    const double seconds = elapsed_seconds(*g.start, *g.end);
    if (trace_ && st.anchor)
      trace_->span_on(st.trace_track, op_times_[g.node].name, "gpu", host_time(*g.start),
                      host_time(*g.end), g.iteration);
    {
      std::lock_guard lock(mutex_);
      op_times_[g.node].gpu_runs += 1;
      op_times_[g.node].gpu_seconds += seconds;
    }
    st.spare_events.push_back(std::move(g.start));
    st.spare_events.push_back(std::move(g.end));
    st.gpu_runs.pop_front();
  }
}

void Executor::count_run(size_t n, const ops::Workspace& ws, bool ran, Clock::time_point start) {
  const auto end = Clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  if (trace_)
    trace_->span(op_times_[n].name, ran ? op_times_[n].backend : "cpu (host part)", start, end,
                 ws.iteration);
  int64_t in = 0, out = 0, samples = 0;
  if (ran) {
    for (const Batch* b : ws.inputs) in += int64_t(b->total_bytes());
    for (const Batch& b : ws.outputs) out += int64_t(b.total_bytes());
    samples = ws.outputs.empty() ? 0 : ws.outputs[0].size();
  }
  std::lock_guard lock(mutex_);
  auto& t = op_times_[n];
  t.runs += ran;
  t.samples += samples;
  t.seconds += seconds;
  t.bytes_in += in, t.bytes_out += out;
}

std::vector<OperatorTimes> Executor::operator_times() const {
  std::lock_guard lock(mutex_);
  return op_times_;
}

std::vector<std::string> Executor::take_incidents() {
  std::lock_guard lock(mutex_);
  return std::exchange(incidents_, {});
}

}  // namespace stoker::pipeline
