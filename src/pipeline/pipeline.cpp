#include "stoker/pipeline.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "stoker/core/affinity.hpp"
#include "stoker/core/thread_pool.hpp"
#include "stoker/kernels/common/arch_check.hpp"
#include "stoker/ops/registry.hpp"
#include "stoker/pipeline/executor.hpp"

namespace stoker {

namespace {
// STOKER_FORCE_CPU=1 places every operator on its CPU backend (the fallbacks run anywhere).
bool force_cpu() {
  const char* v = std::getenv("STOKER_FORCE_CPU");
  return v && *v && std::string(v) != "0";
}

// The documented ranges of the options with a size meaning (docs/design/pipeline.md,
// "Ranges"; python/stoker/options.py words its checks alike). Beyond them a pipeline would start
// more threads than any machine has cores, hold a million batches, or allocate per-sample
// bookkeeping by the gigabyte: refused at build, serialised pipelines too.
constexpr int64_t kMaxBatchSize = int64_t(1) << 20;
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxQueueDepth = 64;

void check_range(const char* name, int64_t value, int64_t lo, int64_t hi) {
  STOKER_ENFORCE(value >= lo, ValueError, name, " must be at least ", lo, ", got ", value,
                 " (its range is [", lo, ", ", hi, "])");
  STOKER_ENFORCE(value <= hi, ValueError, name, " must be at most ", hi, ", got ", value,
                 " (its range is [", lo, ", ", hi, "])");
}

ops::Backend parse_backend(const std::string& device, const std::string& op) {
  if (device == "cpu" || ((device == "gpu" || device == "mixed") && force_cpu()))
    return ops::Backend::kCpu;
  if (device == "gpu") return ops::Backend::kGpu;
  if (device == "mixed") return ops::Backend::kMixed;
  throw ValueError(op + ": device must be 'cpu', 'gpu' or 'mixed', got '" + device + "'");
}
}  // namespace

struct PipelineBuilder::Impl {
  PipelineOptions options;
  pipeline::Graph graph;
  std::set<std::string> names;
  std::map<std::pair<int, int>, Value> on_device;  // CPU value -> its copy_to_device
  // Operators the user added: their instance numbers (random streams) are their positions in
  // definition order, whatever the builder inserts, so placement never changes random draws.
  int64_t user_nodes = 0;

  // The device copy of CPU value `v` (one copy_to_device node per value, made on first use).
  Value to_device(Value v, const std::string& defined_at) {
    auto key = std::make_pair(v.node, v.output);
    if (auto it = on_device.find(key); it != on_device.end()) return it->second;
    ops::OpSpec spec;
    spec.schema = &ops::device_copy_schema();
    spec.instance = (int64_t(1) << 40) + int64_t(graph.nodes.size());  // draws nothing
    spec.batch_size = options.batch_size;
    spec.defined_at = defined_at;
    spec.backend = ops::Backend::kMixed;
    spec.name = "copy_to_device_of_" + std::to_string(v.node) + "_" + std::to_string(v.output);
    while (names.count(spec.name)) spec.name += "_";
    spec.inputs.push_back({v.node, v.output});
    pipeline::validate_node(graph, spec);
    names.insert(spec.name);
    graph.nodes.push_back(std::move(spec));
    Value out{int(graph.nodes.size()) - 1, 0};
    on_device.emplace(key, out);
    return out;
  }
};

PipelineBuilder::PipelineBuilder(PipelineOptions options) : impl_(std::make_unique<Impl>()) {
  check_range("batch_size", options.batch_size, 1, kMaxBatchSize);
  if (options.auto_threads)  // 0: every core (at most kMaxThreads)
    check_range("cpu_budget", options.num_threads, 0, kMaxThreads);
  else
    check_range("num_threads", options.num_threads, 1, kMaxThreads);
  STOKER_ENFORCE(options.on_error == "raise" || options.on_error == "skip", ValueError,
                 "on_error must be 'raise' or 'skip', got '", options.on_error, "'");
  check_range("prefetch_queue_depth", options.prefetch_queue_depth, 1, kMaxQueueDepth);
  check_range("gpu_queue_depth (prefetch_queue_depth's gpu_size)", options.gpu_queue_depth, 1,
              kMaxQueueDepth);
  STOKER_ENFORCE(options.cpu_lanes >= 0 && options.cpu_lanes <= 2, ValueError,
                 "cpu_lanes must be 0 (automatic), 1 or 2, got ", options.cpu_lanes);
  if (options.seed < 0 && !options.checkpoint.empty())
    options.seed = int64_t(pipeline::Checkpoint::parse(options.checkpoint).seed);
  if (options.seed < 0) options.seed = int64_t(std::random_device{}() >> 1);
  if (options.auto_threads && options.num_threads == 0)  // "auto" with no budget: every core
    options.num_threads =
        int(std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, kMaxThreads));
  if (const char* env = std::getenv("STOKER_TRACE"); options.trace.empty() && env)
    options.trace = env;
  impl_->options = options;
}

PipelineBuilder::~PipelineBuilder() = default;

std::vector<Value> PipelineBuilder::add(const std::string& op, const std::vector<Value>& inputs,
                                        const std::map<std::string, ArgValue>& args,
                                        const std::map<std::string, Value>& arg_inputs,
                                        const NodeOptions& node) {
  ops::OpSpec spec;
  spec.schema = ops::find_op_schema(op);
  std::string where = node.defined_at.empty() ? "" : " (defined at " + node.defined_at + ")";
  STOKER_ENFORCE(spec.schema != nullptr, ValueError, "unknown operator '", op, "'", where);
  // Copies to the device draw nothing and take no instance number: adding `.gpu()` never
  // changes another operator's random stream.
  const bool device_copy = spec.schema == &ops::device_copy_schema();
  spec.instance =
      device_copy ? (int64_t(1) << 40) + int64_t(impl_->graph.nodes.size()) : impl_->user_nodes++;
  spec.batch_size = impl_->options.batch_size;
  spec.defined_at = node.defined_at;
  spec.backend = parse_backend(node.device, op + where);
  spec.name = node.name.empty() ? op + "_" + std::to_string(spec.instance) : node.name;
  STOKER_ENFORCE(!impl_->names.count(spec.name), ValueError, op, where, ": the name '", spec.name,
                 "' is already used by another operator");
  // `.gpu()` in Python is copy_to_device with device "gpu": under STOKER_FORCE_CPU it is the
  // identity, and data stays on the CPU.
  if (device_copy && spec.backend == ops::Backend::kCpu && inputs.size() == 1) return {inputs[0]};
  const int host_inputs = spec.schema->host_inputs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Value v = inputs[k];
    // A gpu operator given CPU data gets it copied to the device first (one copy per value),
    // but for the inputs it reads on the host.
    const bool host = host_inputs > 0 && k + size_t(host_inputs) >= spec.schema->inputs.size();
    if (spec.backend == ops::Backend::kGpu && !host && v.node >= 0 &&
        v.node < int(impl_->graph.nodes.size()) &&
        impl_->graph.nodes[size_t(v.node)].backend == ops::Backend::kCpu)
      v = impl_->to_device(v, node.defined_at);
    spec.inputs.push_back({v.node, v.output});
  }
  for (auto& [k, v] : arg_inputs) spec.arg_inputs[k] = {v.node, v.output};
  for (auto& [k, v] : args) spec.args[k] = v;
  pipeline::validate_node(impl_->graph, spec);
  impl_->names.insert(spec.name);
  int node_index = int(impl_->graph.nodes.size());
  std::vector<Value> outs;
  outs.reserve(size_t(spec.num_outputs));
  for (int o = 0; o < spec.num_outputs; ++o) outs.push_back({node_index, o});
  impl_->graph.nodes.push_back(std::move(spec));
  return outs;
}

void PipelineBuilder::set_outputs(const std::vector<Value>& outputs) {
  STOKER_ENFORCE(!outputs.empty(), ValueError, "a pipeline needs at least one output");
  impl_->graph.outputs.clear();
  for (auto& v : outputs) {
    STOKER_ENFORCE(v.node >= 0 && v.node < int(impl_->graph.nodes.size()), ValueError,
                   "pipeline output refers to an unknown node");
    impl_->graph.outputs.push_back({v.node, v.output});
  }
}

struct Pipeline::Impl {
  PipelineOptions options;
  // Shared with a run() in progress: close() from another thread stops the executor, which
  // wakes that run() with an error, and the executor goes when the run() lets go of it.
  std::shared_ptr<pipeline::Executor> executor;
  mutable std::mutex mutex;  // executor's pointer: close() vs run() on other threads

  pipeline::Executor& exec() const {
    STOKER_ENFORCE(executor != nullptr, RuntimeError, "the pipeline was closed");
    return *executor;
  }
  std::shared_ptr<pipeline::Executor> hold() const {
    std::lock_guard lock(mutex);
    STOKER_ENFORCE(executor != nullptr, RuntimeError, "the pipeline was closed");
    return executor;
  }

  int find_node(const std::string& name) const {
    const auto& nodes = exec().graph().nodes;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].name == name) return int(i);
    return -1;
  }
  ops::InputFeed& feed(const std::string& name) {
    int n = find_node(name);
    auto* f = n < 0 ? nullptr : dynamic_cast<ops::InputFeed*>(&exec().op(n));
    STOKER_ENFORCE(f != nullptr, ValueError, "no external source named '", name,
                   "' in the pipeline");
    return *f;
  }
};

std::unique_ptr<Pipeline> PipelineBuilder::build() {
  STOKER_ENFORCE(!impl_->graph.outputs.empty(), ValueError,
                 "the pipeline has no outputs: call set_outputs() before build()");
  auto impl = std::make_unique<Pipeline::Impl>();
  impl->options = impl_->options;
  pipeline::Graph graph = pipeline::prune(impl_->graph);
  if (impl->options.fusion) graph = pipeline::fuse(graph);
  // Threads started while the executor is built inherit the builder's cores; the caller's own
  // cores come back when it is built.
  ScopedAffinity affinity(impl->options.cpu_affinity, "cpu_affinity");
  const bool uses_gpu = std::any_of(graph.nodes.begin(), graph.nodes.end(),
                                    [](const auto& n) { return n.backend != ops::Backend::kCpu; });
  if (uses_gpu && impl->options.device_id) kernels::check_kernel_image(*impl->options.device_id);
  impl->executor = std::make_shared<pipeline::Executor>(std::move(graph), impl->options);
  return std::unique_ptr<Pipeline>(new Pipeline(std::move(impl)));
}

Pipeline::Pipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pipeline::~Pipeline() {
  // In a forked child (a DataLoader worker collecting an inherited pipeline) its threads run
  // only in the parent: joining them would hang, so the child leaks it whole.
  if (in_forked_child()) (void)impl_.release();
}

std::vector<Batch> Pipeline::run(const std::function<bool()>& interrupted) {
  const auto executor = impl_->hold();
  return executor->pop(interrupted);
}

void Pipeline::close() {
  std::shared_ptr<pipeline::Executor> executor;
  {
    std::lock_guard lock(impl_->mutex);
    executor = std::move(impl_->executor);
  }
  // A run() waiting on another thread is woken (an error) and holds the executor until it
  // returns; the last holder destroys it.
  if (executor) executor->close();
}

void Pipeline::feed_input(const std::string& name, Batch batch, bool copy) {
  auto& feed = impl_->feed(name);
  if (copy) {
    feed.check(batch);  // the caller's data is refused before anything is copied
    // The copy is ordered after the feed stream's work and waited for: complete as it is fed.
    feed.feed(impl_->exec().copy_input(batch));
    return;
  }
  if (batch.memory() == MemoryKind::kDevice && !batch.ready_event() &&
      impl_->exec().feed_stream()) {
    // Work queued on the feed stream so far (the producer's, through DLPack) completes it.
    DeviceGuard guard(impl_->options.device_id.value_or(0));
    auto ready = std::make_shared<CudaEvent>();
    ready->record(impl_->exec().feed_stream());
    batch.set_ready_event(std::move(ready));
  }
  feed.feed(std::move(batch));  // checks it
}

StreamHandle Pipeline::feed_stream() const { return impl_->exec().feed_stream(); }

void Pipeline::feed_end(const std::string& name) { impl_->feed(name).feed_end(); }

int64_t Pipeline::fed_batches(const std::string& name) const {
  return impl_->feed(name).batches_fed();
}

void Pipeline::discard_ends() {
  for (const auto& name : external_source_names()) impl_->feed(name).discard_end();
}

std::vector<std::string> Pipeline::external_source_names() const {
  std::vector<std::string> names;
  const auto& g = impl_->exec().graph();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (dynamic_cast<const ops::InputFeed*>(&impl_->exec().op(int(i))))
      names.push_back(g.nodes[i].name);
  return names;
}

std::vector<std::string> Pipeline::reader_names() const {
  std::vector<std::string> names;
  const auto& g = impl_->exec().graph();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (impl_->exec().op(int(i)).reader_meta()) names.push_back(g.nodes[i].name);
  return names;
}

ReaderMeta Pipeline::reader_meta(const std::string& name) const {
  auto readers = reader_names();
  std::string chosen = name;
  if (chosen.empty()) {
    STOKER_ENFORCE(readers.size() == 1, ValueError, "the pipeline has ", readers.size(),
                   " readers; name the one you mean");
    chosen = readers[0];
  }
  int n = impl_->find_node(chosen);
  STOKER_ENFORCE(n >= 0, ValueError, "no operator named '", chosen,
                 "' in the pipeline (pruned operators are removed)");
  auto meta = impl_->exec().op(n).reader_meta();
  STOKER_ENFORCE(meta.has_value(), ValueError, "operator '", chosen, "' is not a reader");
  return *meta;
}

ErrorStats Pipeline::error_stats() const { return impl_->exec().error_stats(); }

std::map<std::string, double> Pipeline::operator_stats(const std::string& name) const {
  int n = impl_->find_node(name);
  STOKER_ENFORCE(n >= 0, ValueError, "no operator named '", name,
                 "' in the pipeline (pruned operators are removed)");
  return impl_->exec().op(n).stats();
}

std::vector<StageStats> Pipeline::stage_stats() const { return impl_->exec().stage_stats(); }
CpuTimes Pipeline::cpu_times() const { return impl_->exec().cpu_times(); }
std::vector<OperatorTimes> Pipeline::operator_times() const {
  return impl_->exec().operator_times();
}
Autotune Pipeline::autotune() const { return impl_->exec().autotune(); }
GpuUtilization Pipeline::gpu_utilization() const { return impl_->exec().gpu_utilization(); }

std::vector<std::string> Pipeline::take_incidents() { return impl_->exec().take_incidents(); }

std::string Pipeline::checkpoint() const { return impl_->exec().checkpoint().to_text(); }

const PipelineOptions& Pipeline::options() const { return impl_->options; }
uint64_t Pipeline::seed() const { return uint64_t(impl_->options.seed); }
int Pipeline::num_outputs() const { return int(impl_->exec().graph().outputs.size()); }
MemoryStats Pipeline::memory_stats() const {
  return {impl_->exec().host_stats(), impl_->exec().device_stats(), impl_->exec().pinned_stats()};
}
void Pipeline::trim_memory() { impl_->exec().trim_memory(); }

}  // namespace stoker
