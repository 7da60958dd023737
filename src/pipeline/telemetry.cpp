#include "stoker/pipeline/telemetry.hpp"

#include <cstdio>
#include <utility>

namespace stoker::pipeline {

Telemetry::Telemetry(const Graph& graph, const std::string& trace_path) {
  for (const auto& spec : graph.nodes)
    op_times_.push_back(
        {spec.name, spec.schema->name, std::string(ops::backend_name(spec.backend))});
  if (!trace_path.empty()) trace_ = std::make_unique<TraceRecorder>(trace_path);
}

int Telemetry::add_stage(std::string name) {
  std::lock_guard lock(mutex_);
  stages_.push_back({std::move(name)});
  return int(stages_.size()) - 1;
}

void Telemetry::stage_waited(int stage, double starved, double blocked, double share) {
  std::lock_guard lock(mutex_);
  auto& s = stages_[size_t(stage)];
  s.starved += starved * share;
  s.blocked += blocked * share;
}

void Telemetry::stage_ran(int stage, double busy, double share) {
  std::lock_guard lock(mutex_);
  auto& s = stages_[size_t(stage)];
  s.busy += busy * share;
  s.iterations += 1;
}

double Telemetry::stage_blocked(int stage) const {
  std::lock_guard lock(mutex_);
  return stages_[size_t(stage)].blocked;
}

void Telemetry::consumer_popped(double waited, const std::vector<size_t>& queue_lengths) {
  std::lock_guard lock(mutex_);
  consumer_.starved += waited;
  consumer_.iterations += 1;
  queue_sums_.resize(queue_lengths.size());
  for (size_t i = 0; i < queue_lengths.size(); ++i) queue_sums_[i] += double(queue_lengths[i]);
  queue_samples_ += 1;
}

int64_t Telemetry::consumer_batches() const {
  std::lock_guard lock(mutex_);
  return consumer_.iterations;
}

std::vector<StageStats> Telemetry::stages() const {
  std::lock_guard lock(mutex_);
  return stages_;
}

StageStats Telemetry::consumer() const {
  std::lock_guard lock(mutex_);
  return consumer_;
}

std::vector<double> Telemetry::queue_means() const {
  std::lock_guard lock(mutex_);
  std::vector<double> means(stages_.size(), 0.0);
  for (size_t i = 0; i < means.size() && i < queue_sums_.size(); ++i)
    if (queue_samples_ > 0) means[i] = queue_sums_[i] / double(queue_samples_);
  return means;
}

void Telemetry::count_run(size_t n, const ops::Workspace& ws, bool ran, Clock::time_point start) {
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

void Telemetry::gpu_run(size_t n, double seconds, int track, int64_t iteration,
                        Clock::time_point span_start, Clock::time_point span_end) {
  if (trace_ && track >= 0)
    trace_->span_on(track, op_times_[n].name, "gpu", span_start, span_end, iteration);
  std::lock_guard lock(mutex_);
  op_times_[n].gpu_runs += 1;
  op_times_[n].gpu_seconds += seconds;
}

std::vector<OperatorTimes> Telemetry::operator_times() const {
  std::lock_guard lock(mutex_);
  return op_times_;
}

void Telemetry::samples_skipped(const ops::OpSpec& spec, const std::map<int, std::string>& failed) {
  std::lock_guard lock(mutex_);
  for (auto& [sample, message] : failed) {
    ++skipped_;
    std::string text = spec.describe() + ": " + message;
    incidents_.push_back(text);
    if (recent_.size() == kRecentIncidents) recent_.erase(recent_.begin());
    recent_.push_back(std::move(text));
  }
}

void Telemetry::samples_warned(const ops::OpSpec& spec, const std::map<int, std::string>& warned) {
  std::lock_guard lock(mutex_);
  for (auto& [sample, message] : warned) {
    ++warnings_;
    if (recent_.size() == kRecentIncidents) recent_.erase(recent_.begin());
    recent_.push_back("warning: " + spec.describe() + ": " + message);
  }
}

ErrorStats Telemetry::error_stats() const {
  std::lock_guard lock(mutex_);
  return {skipped_, warnings_, recent_};
}

std::vector<std::string> Telemetry::take_incidents() {
  std::lock_guard lock(mutex_);
  return std::exchange(incidents_, {});
}

void Telemetry::write_trace() const {
  if (!trace_) return;
  try {
    trace_->write();
  } catch (const std::exception& e) {  // called from destructors: say it instead
    std::fprintf(stderr, "stoker: %s\n", e.what());
  }
}

}  // namespace stoker::pipeline
