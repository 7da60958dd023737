#include "stoker/pipeline/stage.hpp"

#include "stoker/core/affinity.hpp"
#include "stoker/core/mapping_guard.hpp"

namespace stoker::pipeline {

std::map<int, std::string> damaged_samples(const ops::Workspace& ws) {
  std::map<int, std::string> out;
  if (mapping_damage_count() == 0) return out;
  auto check = [&](const Batch& b) {
    if (b.memory() == MemoryKind::kDevice) return;
    for (int i = 0; i < b.size(); ++i) {
      const size_t bytes = size_t(b.shape(i).volume()) * dtype_size(b.dtype());
      const MappingGuard* g = damaged_mapping(b.data(i), bytes);
      if (g == nullptr || out.count(i)) continue;
      out.emplace(i, detail::concat("sample ", i, ": '", g->path(),
                                    "' shrank while its bytes were in use: they are gone (the "
                                    "file changed under the pipeline)"));
    }
  };
  for (const Batch* b : ws.inputs) check(*b);
  for (const auto& [name, b] : ws.arg_inputs) check(*b);
  for (const Batch& b : ws.outputs) check(b);
  return out;
}

ops::Workspace make_workspace(const StageContext& ctx, size_t n,
                              const std::vector<std::vector<Batch>>& values, int64_t iteration,
                              int batch_size) {
  const auto& spec = ctx.graph.nodes[n];
  ops::Workspace ws;
  ws.outputs.reserve(size_t(spec.num_outputs));  // add_output() references stay valid
  for (auto& in : spec.inputs) ws.inputs.push_back(&values[size_t(in.node)][size_t(in.output)]);
  for (auto& [name, in] : spec.arg_inputs)
    ws.arg_inputs[name] = &values[size_t(in.node)][size_t(in.output)];
  for (const ops::OpSpec* step : spec.fused_steps()) {
    auto& args = ws.fused_arg_inputs.emplace_back();
    for (auto& [name, in] : step->arg_inputs)
      args[name] = &values[size_t(in.node)][size_t(in.output)];
  }
  ws.pool = &ctx.pool;
  ws.host_pool = &ctx.host_pool;
  ws.pinned_pool = ctx.pinned_pool;
  ws.device_pool = ctx.device_pool;
  ws.device_id = ctx.device();
  ws.batch_size = batch_size;
  ws.iteration = iteration;
  ws.seed = uint64_t(ctx.options.seed);
  ws.closing = &ctx.stopping;
  return ws;
}

Stage::Stage(const StageContext& ctx, std::string name)
    : ctx_(ctx), name_(std::move(name)), id_(ctx.telemetry.add_stage(name_)) {}

Stage::~Stage() { join(); }

void Stage::start(IterationQueue& in, IterationQueue& out) {
  thread_ = std::thread([this, &in, &out] { loop(in, out); });
}

void Stage::join() {
  if (thread_.joinable()) thread_.join();
}

double Stage::cpu_seconds() const { return thread_cpu_seconds(thread_); }

void Stage::loop(IterationQueue& in, IterationQueue& out) {
  set_thread_name("stoker-" + name_);
  if (auto* trace = ctx_.telemetry.trace()) trace->name_thread(name_ + " stage");
  begin();
  for (;;) {
    // The taker waits for an iteration, then for room after itself (so that it holds none while
    // blocked: the queues bound how far ahead the stages run).
    const auto starved = in.wait_for_item();
    if (!starved) return;
    const auto blocked = out.wait_for_room();
    if (!blocked) return;
    ctx_.telemetry.stage_waited(id_, *starved, *blocked);
    Iteration it = in.pop();
    if (!it.passes_through()) {
      const auto t = Telemetry::Clock::now();
      try {
        process(it);
      } catch (const EndOfData&) {
        it.end_of_data = true;
        it.values.clear();
      } catch (...) {
        it.error = std::current_exception();
      }
      if (auto* trace = ctx_.telemetry.trace())
        trace->span("iteration", "stage", t, Telemetry::Clock::now(), it.number);
      ctx_.telemetry.stage_ran(id_, seconds_since(t));
    }
    if (!out.push(std::move(it))) return;
  }
}

}  // namespace stoker::pipeline
