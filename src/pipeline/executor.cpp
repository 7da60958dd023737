#include "stoker/pipeline/executor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "stoker/core/affinity.hpp"

namespace stoker::pipeline {

namespace {
// Threads of the gpu stage's planning pool: 2 (measured on the H100 host: more compete with the
// CPU decoders for the cores), at most num_threads.
int gpu_planning_threads(int num_threads) { return std::min(2, std::max(1, num_threads)); }
}  // namespace

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

Executor::Executor(Graph graph, const PipelineOptions& options)
    : graph_(std::move(graph)),
      options_(options),
      host_pool_(make_host_allocator(), options.host_memory_budget),
      thread_pool_(options.num_threads) {
  if (!options.trace.empty()) trace_ = std::make_unique<TraceRecorder>(options.trace);
  cpu_depth_ = options.prefetch_queue_depth, last_depth_ = options.gpu_queue_depth;
  if (options.auto_threads) {
    tuner_ = std::make_unique<ThreadTuner>(options.num_threads, std::min(4, options.num_threads));
    thread_pool_.set_active_threads(tuner_->threads());
  }
  std::vector<size_t> mixed, gpu;
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    const auto& spec = graph_.nodes[n];
    op_times_.push_back(
        {spec.name, spec.schema->name, std::string(ops::backend_name(spec.backend))});
    if (graph_.nodes[n].backend == ops::Backend::kMixed) mixed.push_back(n);
    if (graph_.nodes[n].backend == ops::Backend::kGpu) gpu.push_back(n);
  }
  for (auto* nodes : {&mixed, &gpu}) {
    if (nodes->empty()) continue;
    auto& st = stages_.emplace_back();
    st.nodes = std::move(*nodes);
    st.stats.name = nodes == &mixed ? "mixed" : "gpu";
  }
  if (!stages_.empty()) {
    const auto& first = graph_.nodes[stages_[0].nodes[0]];
    STOKER_ENFORCE(device() >= 0, ValueError, first.describe(), " runs on the '",
                   ops::backend_name(first.backend),
                   "' backend, but the pipeline has no GPU (device_id=None); give device_id, or "
                   "use device='cpu'");
    STOKER_ENFORCE(device() < cuda_device_count(), RuntimeError, first.describe(),
                   " needs CUDA device ", device(), ", but ", cuda_device_count(),
                   " device(s) are visible", cuda_device_count() ? "" : " (no GPU or driver)");
    for (auto& st : stages_) {
      const bool gpu = graph_.nodes[st.nodes[0]].backend == ops::Backend::kGpu;
      // Default priority: the mixed stage's stream at the device's greatest priority (so that
      // nvJPEG's kernels would not queue behind augmentation kernels) made no difference on the
      // H100 (docs/findings.md).
      st.stream = std::make_unique<CudaStream>(device());
      if (gpu) st.pool = std::make_unique<ThreadPool>(gpu_planning_threads(options.num_threads));
    }
    device_pool_ = std::make_unique<MemoryPool>(make_device_allocator(device()),
                                                options.device_memory_budget);
    feed_stream_ = std::make_unique<CudaStream>(device());
    gpu_monitor_ = std::make_unique<GpuMonitor>(device());
  }
  if (!stages_.empty() || (options.pinned_outputs && cuda_available())) {
    pinned_pool_ = std::make_unique<MemoryPool>(make_pinned_allocator());
    pinned_outputs_.assign(graph_.nodes.size(), 0);
    for (const auto& spec : graph_.nodes) {
      if (spec.backend != ops::Backend::kMixed) continue;
      for (const auto& in : spec.inputs)
        if (graph_.nodes[size_t(in.node)].backend == ops::Backend::kCpu)
          pinned_outputs_[size_t(in.node)] = 1;
    }
    if (options.pinned_outputs)
      for (const auto& o : graph_.outputs)
        if (graph_.nodes[size_t(o.node)].backend == ops::Backend::kCpu)
          pinned_outputs_[size_t(o.node)] = 1;
  }
  for (auto& spec : graph_.nodes) {
    try {
      if (spec.backend != ops::Backend::kCpu) {
        DeviceGuard guard(device());
        ops_.push_back(spec.schema->factory(spec.backend)(spec));
      } else {
        ops_.push_back(spec.schema->make_cpu(spec));
      }
    } catch (...) {
      rethrow_with_context(std::current_exception(), spec.describe() + ": ");
    }
  }
  // The consumer's queue is the last device stage's, or the CPU stage's without device stages
  // (known only now that the stages are set up).
  if (options.auto_prefetch)
    depth_tuner_ = std::make_unique<DepthTuner>(stages_.empty() ? cpu_depth_ : last_depth_);
  if (!options.checkpoint.empty()) restore(options.checkpoint);
  delivered_ = snapshot(iteration_);
  lanes_ = choose_lanes();
  node_turn_.assign(graph_.nodes.size(), iteration_);
  next_delivery_ = iteration_;
  if (lanes_ > 1) thread_pool_.allow_concurrent_calls(true);
  make_lane_operators();
  producer_ = std::thread([this] { producer_loop(0); });
  for (int l = 1; l < lanes_; ++l) lane_threads_.emplace_back([this, l] { producer_loop(l); });
  for (size_t k = 0; k < stages_.size(); ++k)
    stages_[k].thread = std::thread([this, k] { device_loop(k); });
}

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    stopping_ = true;
  }
  changed_.notify_all();
  turn_changed_.notify_all();
  // Wake operators that wait for external input, so the producer can see stop_.
  for (auto& op : ops_) {
    if (auto* feed = dynamic_cast<ops::InputFeed*>(op.get())) feed->cancel();
  }
  producer_.join();
  for (auto& t : lane_threads_) t.join();
  for (auto& st : stages_) st.thread.join();
  // No kernel may still use what is freed below, and buffers that outlive this executor (held
  // by the consumer) must not record events on its streams once they are gone.
  for (auto& st : stages_) {
    st.stream->synchronize();
    try {
      DeviceGuard guard(device());
      collect_gpu_times(st);             // the last runs' GPU times, for the trace
    } catch (const std::exception& e) {  // a destructor must not throw: say it instead
      std::fprintf(stderr, "stoker: %s\n", e.what());
    }
    device_pool_->forget_stream(st.stream->get());
    pinned_pool_->forget_stream(st.stream->get());
  }
  if (trace_) {
    try {
      trace_->write();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "stoker: %s\n", e.what());
    }
  }
  if (feed_stream_) {
    feed_stream_->synchronize();
    device_pool_->forget_stream(feed_stream_->get());
  }
  // Operators go before the pools they allocate from: readers' I/O threads still load.
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

Checkpoint Executor::snapshot(int64_t iteration,
                              const std::vector<std::optional<std::string>>* states) const {
  Checkpoint c;
  c.seed = uint64_t(options_.seed);
  c.iteration = iteration;
  for (size_t n = 0; n < ops_.size(); ++n) {
    auto state = states ? (*states)[n] : ops_[n]->save_state();
    if (state) c.ops.emplace_back(graph_.nodes[n].name, *state);
  }
  return c;
}

void Executor::restore(const std::string& text) {
  Checkpoint c = Checkpoint::parse(text);
  STOKER_ENFORCE(c.seed == uint64_t(options_.seed), ValueError, "the checkpoint was taken with seed ", c.seed,
                 " but this pipeline has seed ", options_.seed,
                 "; build it with the same seed (or seed=-1 to adopt the checkpoint's)");
  std::vector<bool> restored(ops_.size(), false);
  for (const auto& [name, state] : c.ops) {
    size_t n = 0;
    while (n < graph_.nodes.size() && graph_.nodes[n].name != name) ++n;
    STOKER_ENFORCE(n < graph_.nodes.size(), ValueError, "the checkpoint has a state for operator '",
                   name, "', which this pipeline does not have");
    try {
      ops_[n]->restore_state(state);
    } catch (...) {
      rethrow_with_context(std::current_exception(), graph_.nodes[n].describe() + ": ");
    }
    restored[n] = true;
  }
  for (size_t n = 0; n < ops_.size(); ++n) {
    STOKER_ENFORCE(restored[n] || !ops_[n]->save_state(), ValueError,
                   "the checkpoint has no state for ", graph_.nodes[n].describe(),
                   " (was it taken from another pipeline?)");
  }
  iteration_ = c.iteration;
}

Checkpoint Executor::checkpoint() const {
  std::lock_guard lock(mutex_);
  return delivered_;
}

Executor::Result Executor::run_iteration(int64_t iteration, int lane) {
  Result result;
  result.iteration = iteration;
  std::vector<std::vector<Batch>> values;
  uint32_t round = 0;
  int64_t replaced = 0;
  std::vector<std::optional<std::string>> states;
  try {
    values = run_nodes(graph_.nodes.size(), options_.batch_size, iteration, round, replaced,
                       stages_.empty() ? nullptr : &result.prepared, lanes_ > 1 ? &states : nullptr,
                       lane);
  } catch (const EndOfData&) {
    result.end_of_data = true;
    return result;
  } catch (...) {
    result.error = std::current_exception();
    return result;
  }
  // With lanes another lane may have run later iterations of the stateful nodes already:
  // their states were taken right after this iteration's runs.
  if (lanes_ == 1) ++iteration_;
  result.after = snapshot(iteration + 1, lanes_ > 1 ? &states : nullptr);
  if (stages_.empty()) {
    for (auto& o : graph_.outputs)
      result.outputs.push_back(values[size_t(o.node)][size_t(o.output)]);
  } else {
    result.values = std::move(values);
  }
  return result;
}

void Executor::run_device_stage(size_t stage, Result& r) {
  DeviceGuard guard(device());
  auto& st = stages_[stage];
  const StreamHandle stream = st.stream->get();
  if (r.ready) r.ready->wait_on(stream);  // the previous device stage's work on this iteration
  auto& values = r.values;
  for (size_t n : st.nodes) {
    const auto& spec = graph_.nodes[n];
    ops::Workspace ws;
    ws.outputs.reserve(size_t(spec.num_outputs));
    for (auto& in : spec.inputs) {
      const Batch& b = values[size_t(in.node)][size_t(in.output)];
      // Another stage's device output, read on this stream: its memory is recycled only after.
      if (b.memory() == MemoryKind::kDevice &&
          graph_.nodes[size_t(in.node)].backend != spec.backend)
        b.record_stream(stream);
      ws.inputs.push_back(&b);
    }
    for (auto& [name, in] : spec.arg_inputs)
      ws.arg_inputs[name] = &values[size_t(in.node)][size_t(in.output)];
    ws.pool = st.pool ? st.pool.get() : &thread_pool_;
    ws.host_pool = &host_pool_;
    ws.device_pool = device_pool_.get();
    ws.pinned_pool = pinned_pool_.get();
    ws.stream = stream;
    ws.device_id = device();
    ws.batch_size = options_.batch_size;
    ws.iteration = r.iteration;
    ws.seed = uint64_t(options_.seed);
    if (n < r.prepared.size()) ws.prepared = std::move(r.prepared[n]);
    const auto t = Clock::now();
    try {
      auto gpu_start = record_timing(st);
      ops_[n]->run(ws);
      STOKER_ASSERT(int(ws.outputs.size()) == spec.num_outputs, spec.schema->name, " produced ",
                    ws.outputs.size(), " outputs");
      cuda_check(last_cuda_error(), "launching a kernel");
      count_run(n, ws, true, t);
      st.gpu_runs.push_back({n, r.iteration, std::move(gpu_start), record_timing(st)});
    } catch (const EndOfData&) {
      throw;  // a gpu external source ended its epoch
    } catch (...) {
      rethrow_with_context(std::current_exception(), "Error in operator " + spec.describe() +
                                                         ", iteration " +
                                                         std::to_string(r.iteration) + ", ");
    }
    values[n] = std::move(ws.outputs);
  }
  collect_gpu_times(st);
  // One event marks this stage's work on the iteration: the next stage waits on it; after the
  // last stage, device outputs carry it to the consumer.
  auto ready = std::make_shared<CudaEvent>();
  ready->record(stream);
  r.ready = ready;
  if (stage + 1 < stages_.size()) return;
  for (auto& o : graph_.outputs) {
    Batch b = values[size_t(o.node)][size_t(o.output)];
    if (b.memory() == MemoryKind::kDevice) {
      // Outputs of an earlier stage are complete by this event too (stream order + waits).
      b.set_ready_event(ready);
      if (graph_.nodes[size_t(o.node)].backend != graph_.nodes[st.nodes[0]].backend)
        b.record_stream(stream);
    }
    r.outputs.push_back(std::move(b));
  }
  values.clear();
}

bool Executor::prepares_on_host(size_t n) const {
  const auto& spec = graph_.nodes[n];
  if (spec.backend != ops::Backend::kMixed) return false;
  for (const auto& in : spec.inputs)
    if (graph_.nodes[size_t(in.node)].backend != ops::Backend::kCpu) return false;
  for (const auto& [name, in] : spec.arg_inputs)
    if (graph_.nodes[size_t(in.node)].backend != ops::Backend::kCpu) return false;
  return true;
}

std::vector<std::vector<Batch>> Executor::run_nodes(size_t count, int batch, int64_t iteration,
                                                    uint32_t& round, int64_t& replaced,
                                                    std::vector<std::shared_ptr<void>>* prepared,
                                                    std::vector<std::optional<std::string>>* states,
                                                    int lane) {
  const uint32_t my_round = round;
  std::vector<std::vector<Batch>> values(count);
  if (prepared) prepared->assign(count, nullptr);
  if (states) states->assign(count, std::nullopt);
  for (size_t n = 0; n < count; ++n) {
    const auto& spec = graph_.nodes[n];
    // The device stages' nodes run there (run_device_stage); mixed ones may prepare here.
    const bool prepare = prepared && prepares_on_host(n);
    if (spec.backend != ops::Backend::kCpu && !prepare) continue;
    ops::Workspace ws;
    ws.outputs.reserve(size_t(spec.num_outputs));  // add_output() references stay valid
    for (auto& r : spec.inputs) ws.inputs.push_back(&values[size_t(r.node)][size_t(r.output)]);
    for (auto& [name, r] : spec.arg_inputs)
      ws.arg_inputs[name] = &values[size_t(r.node)][size_t(r.output)];
    ws.pool = &thread_pool_;
    ws.host_pool =
        !pinned_outputs_.empty() && pinned_outputs_[n] ? pinned_pool_.get() : &host_pool_;
    ws.pinned_pool = pinned_pool_.get();
    ws.device_id = device();
    ws.batch_size = batch;
    ws.iteration = iteration;
    ws.seed = uint64_t(options_.seed);
    ws.stream_epoch = my_round;
    ops::SampleFailures failures, warned;
    if (skip_bad_samples()) ws.failures = &failures;
    ws.warnings = &warned;
    // Closing skips what is left of a cpu operator's samples. Not a mixed operator's host
    // part: the mixed stage would take its half-done plan to the GPU.
    if (!prepare) ws.stopping = &stopping_;
    const std::string context =
        "Error in operator " + spec.describe() + ", iteration " + std::to_string(iteration) + ", ";
    // CPU lanes: a shared operator's runs of earlier iterations first (another lane may hold
    // one); the others are the lane's own.
    ops::Operator& op = lane_op(lane, n);
    const bool turns = states && !lane_ops_.empty() && !lane_ops_[0][n];
    if (turns && !wait_turn(n, iteration)) throw RuntimeError("the pipeline is stopping");
    const auto t = Clock::now();
    try {
      if (prepare) {
        (*prepared)[n] = op.prepare_on_host(ws);
      } else {
        op.run(ws);
        STOKER_ASSERT(int(ws.outputs.size()) == spec.num_outputs, spec.schema->name, " produced ",
                      ws.outputs.size(), " outputs");
      }
    } catch (const EndOfData&) {
      throw;
    } catch (...) {
      rethrow_with_context(std::current_exception(), context);
    }
    // Closing: the samples were skipped; nothing downstream may use the outputs.
    if (stopping_) throw RuntimeError("the pipeline is stopping");
    count_run(n, ws, !prepare, t);  // a mixed node's host part: its time only
    if (turns) {
      (*states)[n] = op.save_state();
      pass_turn(n, iteration);
    }
    if (!prepare) values[n] = std::move(ws.outputs);
    if (!warned.empty()) record_warnings(spec, warned.by_sample());
    if (failures.empty()) continue;

    // on_error="skip": drop the failed samples from everything computed so far in this
    // iteration and replace them with new ones, read by running the nodes before this one
    // (and this one, when it produced values) again.
    const auto& failed = failures.by_sample();
    for (size_t k = 0; k <= n; ++k) {
      if (dynamic_cast<ops::InputFeed*>(ops_[k].get())) {
        throw ValueError(context + failed.begin()->second +
                         " (on_error='skip' cannot replace samples that come from an "
                         "external_source)");
      }
    }
    record_skips(spec, failed);
    replaced += int64_t(failed.size());
    STOKER_ENFORCE(replaced <= int64_t(kMaxSkipsPerBatch) * options_.batch_size, RuntimeError,
                   context, "on_error='skip' gave up after replacing ", replaced,
                   " samples in one batch; the last: ", failed.rbegin()->second);
    std::vector<int> keep;
    for (int i = 0; i < batch; ++i)
      if (!failed.count(i)) keep.push_back(i);
    const size_t redo = prepare ? n : n + 1;  // a preparing node is prepared again below
    for (size_t k = 0; k < redo; ++k)
      for (auto& b : values[k]) b = b.select(keep);
    auto refill = run_nodes(redo, int(failed.size()), iteration, ++round, replaced);
    for (size_t k = 0; k < redo; ++k)
      for (size_t o = 0; o < values[k].size(); ++o) values[k][o].append(refill[k][o]);
    if (prepared)
      for (size_t k = 0; k <= n; ++k) (*prepared)[k] = nullptr;
    if (prepare) --n;  // prepares the new batch
  }
  return values;
}

void Executor::record_skips(const ops::OpSpec& spec, const std::map<int, std::string>& failed) {
  std::lock_guard lock(mutex_);
  for (auto& [sample, message] : failed) {
    ++skipped_;
    std::string text = spec.describe() + ": " + message;
    incidents_.push_back(text);
    if (recent_.size() == kRecentIncidents) recent_.erase(recent_.begin());
    recent_.push_back(std::move(text));
  }
}

void Executor::record_warnings(const ops::OpSpec& spec, const std::map<int, std::string>& warned) {
  std::lock_guard lock(mutex_);
  for (auto& [sample, message] : warned) {
    ++warnings_;
    if (recent_.size() == kRecentIncidents) recent_.erase(recent_.begin());
    recent_.push_back("warning: " + spec.describe() + ": " + message);
  }
}

bool Executor::deliver(Result r, std::deque<Result>& to, bool in_order) {
  const bool failed = bool(r.error);
  {
    std::unique_lock lock(mutex_);
    if (in_order) {  // CPU lanes: iteration r.iteration's turn
      changed_.wait(lock, [&] { return stop_ || next_delivery_ == r.iteration; });
      if (stop_) return false;
      ++next_delivery_;
      if (failed_) {  // nothing is delivered after a failed iteration
        lock.unlock();
        changed_.notify_all();
        return false;
      }
    }
    if (stop_) return false;  // EndOfData from a cancelled feed, or a late result nobody wants
    if (failed && &to == &queue_) {
      failed_ = true;
      try {
        std::rethrow_exception(r.error);
      } catch (const std::exception& e) {
        failure_ = e.what();
      }
    }
    to.push_back(std::move(r));
  }
  changed_.notify_all();
  return !failed;
}

void Executor::device_loop(size_t stage) {
  set_thread_name("stoker-gpu" + std::to_string(stage));
  auto& in = stages_[stage].input;
  const bool last = stage + 1 == stages_.size();
  auto& out = last ? queue_ : stages_[stage + 1].input;
  // Between device stages one iteration may wait; the consumer's queue holds last_depth_
  // (gpu_queue_depth, or more with prefetch_queue_depth="auto").
  auto depth = [&] { return last ? last_depth_ : 1; };
  if (trace_) {
    auto& st = stages_[stage];
    trace_->name_thread(st.stats.name + " stage");
    // GPU spans go on the stream's track, placed by an anchor event that finishes now (the
    // stream is idle): a span's host time is this time + its GPU time since the anchor.
    st.trace_track = trace_->add_track(st.stats.name + " stage stream");
    try {
      DeviceGuard guard(device());
      auto anchor = std::make_unique<CudaEvent>(/*timing=*/true);
      anchor->record(st.stream->get());
      anchor->synchronize();
      st.anchor_time = Clock::now();
      st.anchor = std::move(anchor);
    } catch (const std::exception& e) {  // the trace goes without GPU spans
      std::fprintf(stderr, "stoker: no GPU spans in the trace: %s\n", e.what());
    }
  }
  for (;;) {
    Result r;
    auto& stats = stages_[stage].stats;
    {
      std::unique_lock lock(mutex_);
      auto t = Clock::now();
      changed_.wait(lock, [&] { return stop_ || !in.empty(); });
      stats.starved += seconds_since(t);
      t = Clock::now();
      changed_.wait(lock, [&] { return stop_ || int(out.size()) < depth(); });
      stats.blocked += seconds_since(t);
      if (stop_) return;
      r = std::move(in.front());
      in.pop_front();
    }
    changed_.notify_all();  // the stage before may run ahead again
    if (!r.error && !r.end_of_data) {
      const auto t = Clock::now();
      try {
        run_device_stage(stage, r);
      } catch (const EndOfData&) {
        r.end_of_data = true;
        r.values.clear();
      } catch (...) {
        r.error = std::current_exception();
      }
      if (trace_) trace_->span("iteration", "stage", t, Clock::now(), r.iteration);
      std::lock_guard lock(mutex_);
      stats.busy += seconds_since(t);
      stats.iterations += 1;
    }
    if (!deliver(std::move(r), out)) return;
  }
}

std::vector<Batch> Executor::pop(const std::function<bool()>& interrupted) {
  Result r;
  double waited = 0;
  size_t queued = 0;
  {
    std::unique_lock lock(mutex_);
    queued = queue_.size();
    if (!started_) {
      started_ = true;
      start_time_ = Clock::now();
      if (gpu_monitor_) gpu_monitor_->start();
      changed_.notify_all();
    }
    // How full each stage's output queue is when the consumer comes (0: it will wait).
    queue_sums_.resize(stages_.size() + 1);
    for (size_t i = 0; i < queue_sums_.size(); ++i)
      queue_sums_[i] += double(i < stages_.size() ? stages_[i].input.size() : queue_.size());
    queue_samples_ += 1;
    const auto t = Clock::now();
    const auto ready = [&] { return !queue_.empty() || failed_; };
    if (!interrupted) {
      changed_.wait(lock, ready);
    } else {
      while (!changed_.wait_for(lock, std::chrono::milliseconds(50), ready)) {
        lock.unlock();  // the check may take the caller's locks (Python's GIL)
        const bool stop = interrupted();
        lock.lock();
        if (stop) throw Interrupted();
      }
    }
    waited = seconds_since(t);
    consumer_stats_.starved += waited;
    if (trace_) {
      if (consumer_stats_.iterations == 0) trace_->name_thread("consumer (run)");
      trace_->span("waiting for a batch", "consumer", t, Clock::now());
    }
    consumer_stats_.iterations += 1;
    if (queue_.empty()) {
      throw RuntimeError("the pipeline stopped after an earlier error: " + failure_);
    }
    r = std::move(queue_.front());
    queue_.pop_front();
  }
  changed_.notify_all();
  if (r.error) std::rethrow_exception(r.error);
  if (r.end_of_data) throw EndOfData();
  {
    std::lock_guard lock(mutex_);
    delivered_ = std::move(r.after);
    tune(waited, queued);
  }
  return std::move(r.outputs);
}

}  // namespace stoker::pipeline
