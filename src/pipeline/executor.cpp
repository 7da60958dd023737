#include "stoker/pipeline/executor.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <system_error>

#include "stoker/core/error.hpp"
#include "stoker/ops/sequence_operator.hpp"

namespace stoker::pipeline {

namespace {
// Threads of the gpu stage's planning pool: 2 (measured on the H100 host: more compete with the
// CPU decoders for the cores), at most num_threads.
int gpu_planning_threads(int num_threads) { return std::min(2, std::max(1, num_threads)); }

std::vector<size_t> nodes_of(const Graph& g, ops::Backend backend) {
  std::vector<size_t> nodes;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (g.nodes[n].backend == backend) nodes.push_back(n);
  return nodes;
}
}  // namespace

Executor::Executor(Graph graph, const PipelineOptions& options)
    : graph_(std::move(graph)),
      options_(options),
      host_pool_(make_host_allocator(), options.host_memory_budget),
      thread_pool_(options.num_threads, "the pipeline's thread pool (num_threads)"),
      telemetry_(graph_, options.trace),
      checkpoints_(graph_, ops_, uint64_t(options.seed)) {
  const std::vector<size_t> mixed = nodes_of(graph_, ops::Backend::kMixed);
  const std::vector<size_t> gpu = nodes_of(graph_, ops::Backend::kGpu);
  const bool device_stages = !mixed.empty() || !gpu.empty();
  if (device_stages) {
    const auto& first = graph_.nodes[mixed.empty() ? gpu[0] : mixed[0]];
    STOKER_ENFORCE(device() >= 0, ValueError, first.describe(), " runs on the '",
                   ops::backend_name(first.backend),
                   "' backend, but the pipeline has no GPU (device_id=None); give device_id, or "
                   "use device='cpu'");
    STOKER_ENFORCE(device() < cuda_device_count(), RuntimeError, first.describe(),
                   " needs CUDA device ", device(), ", but ", cuda_device_count(),
                   " device(s) are visible", cuda_device_count() ? "" : " (no GPU or driver)");
    device_pool_ = std::make_unique<MemoryPool>(make_device_allocator(device()),
                                                options.device_memory_budget);
    feed_stream_ = std::make_unique<CudaStream>(device());
    gpu_monitor_ = std::make_unique<GpuMonitor>(device());
  }
  if (device_stages || (options.pinned_outputs && cuda_available()))
    pinned_pool_ = std::make_unique<MemoryPool>(make_pinned_allocator());
  make_operators();
  context_ = std::make_unique<StageContext>(StageContext{
      graph_, options_, ops_, thread_pool_, host_pool_, pinned_pool_.get(), device_pool_.get(),
      telemetry_, stopping_});

  int64_t first_iteration = 0;
  if (!options.checkpoint.empty()) first_iteration = checkpoints_.restore(options.checkpoint);
  checkpoints_.delivered(checkpoints_.snapshot(first_iteration));

  // The chain: CPU stage, then the device stages the graph has, each feeding the next's queue.
  const int stages = 1 + !mixed.empty() + !gpu.empty();
  for (int k = 0; k < stages; ++k) {
    // The CPU stage's output holds prefetch_queue_depth; between device stages one waits; the
    // consumer's holds gpu_queue_depth (without device stages: the CPU stage's).
    const bool last = k + 1 == stages;
    const int depth = k == 0 ? options.prefetch_queue_depth : last ? options.gpu_queue_depth : 1;
    queues_.push_back(std::make_unique<IterationQueue>(depth));
  }
  cpu_stage_ = std::make_unique<CpuStage>(*context_, checkpoints_, *queues_[0], first_iteration,
                                          device_stages, pinned_outputs());
  for (const auto* nodes : {&mixed, &gpu}) {
    if (nodes->empty()) continue;
    const bool is_gpu = nodes == &gpu;
    const bool last = device_stages_.size() + 2 == size_t(stages);
    device_stages_.push_back(std::make_unique<DeviceStage>(
        *context_, is_gpu ? "gpu" : "mixed", *nodes, last,
        is_gpu ? gpu_planning_threads(options.num_threads) : 0));
  }
  tuning_ = std::make_unique<Tuning>(
      options_, thread_pool_, *queues_.back(),
      device_stages_.empty() ? cpu_stage_->telemetry_id() : device_stages_.back()->telemetry_id(),
      telemetry_);
  start_threads();
}

void Executor::start_threads() {
  // A thread the system refuses stops the threads started before it (they would wait on
  // their queues for ever), and the error says which one. No destructor runs for a
  // constructor that throws, so this is the only place to do it.
  try {
    cpu_stage_->start();  // stops and joins its own lanes when one cannot start
    for (size_t k = 0; k < device_stages_.size(); ++k) {
      try {
        device_stages_[k]->start(*queues_[k], *queues_[k + 1]);
      } catch (const std::system_error& e) {
        thread_start_failed("the " + device_stages_[k]->name() + " stage", 1, 1, e);
      }
    }
  } catch (...) {
    stop();
    // As the destructor does: stages and queues before the operators, operators before the
    // pools (members would go in the reverse order of their declaration).
    tuning_.reset();
    device_stages_.clear();
    cpu_stage_.reset();
    queues_.clear();
    ops_.clear();
    throw;
  }
}

void Executor::make_operators() {
  for (auto& spec : graph_.nodes) {
    try {
      std::optional<DeviceGuard> guard;  // device operators are made on their device
      if (spec.backend != ops::Backend::kCpu) guard.emplace(device());
      ops_.push_back(ops::make_operator(spec));
    } catch (...) {
      rethrow_with_context(std::current_exception(), spec.describe() + ": ");
    }
  }
}

std::vector<char> Executor::pinned_outputs() const {
  // CPU nodes whose outputs a mixed operator reads allocate from the pinned pool, so the device
  // reads them by DMA without a staging copy (nvJPEG's hardware decoder, transfers); with
  // pinned_outputs, so do the pipeline's CPU outputs.
  std::vector<char> pinned;
  if (!pinned_pool_) return pinned;
  pinned.assign(graph_.nodes.size(), 0);
  for (const auto& spec : graph_.nodes) {
    if (spec.backend != ops::Backend::kMixed) continue;
    for (const auto& in : spec.inputs)
      if (graph_.nodes[size_t(in.node)].backend == ops::Backend::kCpu) pinned[size_t(in.node)] = 1;
  }
  if (options_.pinned_outputs)
    for (const auto& o : graph_.outputs)
      if (graph_.nodes[size_t(o.node)].backend == ops::Backend::kCpu) pinned[size_t(o.node)] = 1;
  return pinned;
}

void Executor::stop() {
  stopping_ = true;
  if (cpu_stage_) cpu_stage_->stop();
  for (auto& q : queues_) q->stop();
  // Wake operators that wait for external input, so the CPU stage can see the stop.
  for (auto& op : ops_) {
    if (auto* feed = dynamic_cast<ops::InputFeed*>(op.get())) feed->cancel();
  }
  if (cpu_stage_) cpu_stage_->join();
  for (auto& st : device_stages_) st->join();
}

Executor::~Executor() {
  stop();
  // No kernel may still use what is freed below, and buffers that outlive this executor (held
  // by the consumer) must not record events on its streams once they are gone.
  for (auto& st : device_stages_) st->finish();
  telemetry_.write_trace();
  if (feed_stream_) {
    feed_stream_->synchronize();
    device_pool_->forget_stream(feed_stream_->get());
  }
  // Stages and queues (holding batches) go before the operators, and operators before the
  // pools they allocate from: readers' I/O threads still load.
  device_stages_.clear();
  cpu_stage_.reset();
  queues_.clear();
  ops_.clear();
}

Batch Executor::copy_input(const Batch& in) {
  const std::vector<TensorShape> shapes = in.shapes();
  Batch out;
  if (in.memory() != MemoryKind::kDevice) {
    out = Batch::allocate(host_pool_, in.dtype(), shapes, in.layout());
    for (int i = 0; i < in.size(); ++i)
      if (size_t n = in.sample(i).num_bytes()) std::memcpy(out.data(i), in.data(i), n);
  } else {
    STOKER_ENFORCE(feed_stream_ != nullptr, TypeError,
                   "got GPU data, but this pipeline runs nothing on the GPU");
    DeviceGuard guard(device());
    const StreamHandle s = feed_stream_->get();
    if (in.ready_event()) in.ready_event()->wait_on(s);
    out = Batch::allocate_on(s, *device_pool_, in.dtype(), shapes, in.layout());
    std::vector<CopyPiece> pieces;  // one copy when the fed samples lie back to back
    pieces.reserve(size_t(in.size()));
    for (int i = 0; i < in.size(); ++i)
      pieces.push_back({out.data(i), in.data(i), in.sample(i).num_bytes()});
    for (const CopyPiece& p : merge_adjacent_copies(pieces))
      copy_device_async(p.dst, p.src, p.bytes, s);
    // Waited for here, so `in`'s buffers need no event guarding their reuse.
    feed_stream_->synchronize();
  }
  out.copy_source_info(in);
  return out;
}

void Executor::trim_memory() {
  host_pool_.trim();
  if (pinned_pool_) pinned_pool_->trim();
  if (device_pool_) device_pool_->trim();
}

std::vector<Batch> Executor::pop(const std::function<bool()>& interrupted) {
  if (!started_) {
    if (gpu_monitor_) {
      // Before started_: a monitor that cannot start fails this pop() only (the next one runs
      // without it), never leaves the CPU stage waiting for a begin() that never comes.
      try {
        gpu_monitor_->start();
      } catch (const std::system_error& e) {
        thread_start_failed("the GPU utilisation monitor", 1, 1, e);
      }
    }
    start_time_ = Telemetry::Clock::now();
    started_ = true;
    cpu_stage_->begin();
  }
  // How full each stage's output queue is when the consumer comes (0: it will wait).
  std::vector<size_t> lengths;
  for (const auto& q : queues_) lengths.push_back(q->size());
  IterationQueue& queue = *queues_.back();
  double waited = 0;
  const auto t = Telemetry::Clock::now();
  Iteration it;
  try {
    it = queue.take(interrupted, waited);
  } catch (const Interrupted&) {
    throw;
  } catch (...) {  // the pipeline stopped after an earlier error: the wait still counts
    telemetry_.consumer_popped(seconds_since(t), lengths);
    throw;
  }
  if (auto* trace = telemetry_.trace()) {
    if (telemetry_.consumer_batches() == 0) trace->name_thread("consumer (run)");
    trace->span("waiting for a batch", "consumer", t, Telemetry::Clock::now());
  }
  telemetry_.consumer_popped(waited, lengths);
  if (it.error) std::rethrow_exception(it.error);
  if (it.end_of_data) throw EndOfData();
  checkpoints_.delivered(std::move(it.after));
  tuning_->on_batch(waited, lengths.back());
  return std::move(it.outputs);
}

std::vector<StageStats> Executor::stage_stats() const {
  std::vector<StageStats> out = telemetry_.stages();
  const std::vector<double> means = telemetry_.queue_means();
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].queue_capacity = queues_[i]->capacity();
    out[i].queue_mean = means[i];
  }
  out[0].cpu = cpu_stage_->cpu_seconds();
  out[0].threads = cpu_stage_->lanes();
  for (size_t k = 0; k < device_stages_.size(); ++k)
    out[k + 1].cpu = device_stages_[k]->cpu_seconds();
  out.push_back(telemetry_.consumer());
  return out;
}

CpuTimes Executor::cpu_times() const {
  CpuTimes t;
  t.threads.emplace_back("cpu stage", cpu_stage_->cpu_seconds());
  for (const auto& st : device_stages_)
    t.threads.emplace_back(st->name() + " stage", st->cpu_seconds());
  t.threads.emplace_back("workers", thread_pool_.workers_cpu_seconds());
  for (const auto& st : device_stages_)
    if (const ThreadPool* pool = st->planning_pool())
      t.threads.emplace_back(st->name() + " stage workers", pool->workers_cpu_seconds());
  // Threads start with the pipeline; the seconds count from there (the first run()).
  t.wall = started_ ? seconds_since(start_time_) : 0.0;
  return t;
}

GpuUtilization Executor::gpu_utilization() const {
  if (gpu_monitor_) return gpu_monitor_->read();
  GpuUtilization none;
  none.why = "the pipeline has no GPU stages";
  return none;
}

}  // namespace stoker::pipeline
