#include "stoker/pipeline/device_stage.hpp"

#include <cstdio>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

DeviceStage::DeviceStage(const StageContext& ctx, std::string name, std::vector<size_t> nodes,
                         bool last, int planning_threads)
    : Stage(ctx, std::move(name)),
      nodes_(std::move(nodes)),
      last_(last),
      // Default priority: the mixed stage's stream at the device's greatest priority (so that
      // nvJPEG's kernels would not queue behind augmentation kernels) made no difference on
      // the H100 (docs/findings.md).
      stream_(std::make_unique<CudaStream>(ctx.device())),
      timer_(ctx.telemetry, *stream_) {
  if (planning_threads > 0) pool_ = std::make_unique<ThreadPool>(planning_threads);
}

DeviceStage::~DeviceStage() { join(); }

void DeviceStage::begin() {
  // GPU spans go on the stream's track, anchored while the stream is idle.
  timer_.add_trace_track(name() + " stage stream", ctx_.device());
}

void DeviceStage::finish() {
  stream_->synchronize();
  try {
    DeviceGuard guard(ctx_.device());
    timer_.collect();
  } catch (const std::exception& e) {  // called from destructors: say it instead
    std::fprintf(stderr, "stoker: %s\n", e.what());
  }
  if (ctx_.device_pool) ctx_.device_pool->forget_stream(stream());
  if (ctx_.pinned_pool) ctx_.pinned_pool->forget_stream(stream());
}

void DeviceStage::process(Iteration& it) {
  DeviceGuard guard(ctx_.device());
  const StreamHandle s = stream();
  if (it.ready) it.ready->wait_on(s);  // the previous device stage's work on this iteration
  auto& values = it.values;
  const ops::Backend backend = ctx_.graph.nodes[nodes_[0]].backend;
  for (size_t n : nodes_) {
    const auto& spec = ctx_.graph.nodes[n];
    ops::Workspace ws = make_workspace(ctx_, n, values, it.number, ctx_.options.batch_size);
    // Another stage's device output, read on this stream: its memory is recycled only after.
    for (auto& in : spec.inputs) {
      const Batch& b = values[size_t(in.node)][size_t(in.output)];
      if (b.memory() == MemoryKind::kDevice && ctx_.graph.nodes[size_t(in.node)].backend != backend)
        b.record_stream(s);
    }
    if (pool_) ws.pool = pool_.get();
    ws.stream = s;
    if (n < it.prepared.size()) ws.prepared = std::move(it.prepared[n]);
    const auto t = Telemetry::Clock::now();
    try {
      auto gpu_start = timer_.mark();
      ctx_.ops[n]->run(ws);
      STOKER_ASSERT(int(ws.outputs.size()) == spec.num_outputs, spec.schema->name, " produced ",
                    ws.outputs.size(), " outputs");
      cuda_check(last_cuda_error(), "launching a kernel");
      // Host bytes copied up (a mixed decoder's input) from a file that shrank meanwhile.
      const auto damaged = damaged_samples(ws);
      if (!damaged.empty()) throw IOError(damaged.begin()->second);
      ctx_.telemetry.count_run(n, ws, true, t);
      timer_.ran(n, it.number, std::move(gpu_start));
    } catch (const EndOfData&) {
      throw;  // a gpu external source ended its epoch
    } catch (...) {
      rethrow_with_context(std::current_exception(), "Error in operator " + spec.describe() +
                                                         ", iteration " +
                                                         std::to_string(it.number) + ", ");
    }
    values[n] = std::move(ws.outputs);
  }
  timer_.collect();
  // One event marks this stage's work on the iteration: the next stage waits on it; after the
  // last stage, device outputs carry it to the consumer.
  auto ready = std::make_shared<CudaEvent>();
  ready->record(s);
  it.ready = ready;
  if (!last_) return;
  for (auto& o : ctx_.graph.outputs) {
    Batch b = values[size_t(o.node)][size_t(o.output)];
    if (b.memory() == MemoryKind::kDevice) {
      // Outputs of an earlier stage are complete by this event too (stream order + waits).
      b.set_ready_event(ready);
      if (ctx_.graph.nodes[size_t(o.node)].backend != backend) b.record_stream(s);
    }
    it.outputs.push_back(std::move(b));
  }
  values.clear();
}

}  // namespace stoker::pipeline
