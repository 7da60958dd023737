#include "stoker/pipeline/cpu_stage.hpp"

#include "stoker/core/affinity.hpp"
#include "stoker/core/error.hpp"
#include "stoker/ops/sequence_operator.hpp"

namespace stoker::pipeline {
namespace {
using Clock = Telemetry::Clock;
}  // namespace

CpuStage::CpuStage(const StageContext& ctx, Checkpointer& checkpoints, IterationQueue& out,
                   int64_t first_iteration, bool feeds_device_stages,
                   std::vector<char> pinned_outputs)
    : ctx_(ctx),
      checkpoints_(checkpoints),
      out_(out),
      feeds_device_(feeds_device_stages),
      pinned_outputs_(std::move(pinned_outputs)),
      id_(ctx.telemetry.add_stage("cpu")),
      next_iteration_(first_iteration) {
  lanes_ = choose_lanes();
  node_turn_.assign(ctx_.graph.nodes.size(), first_iteration);
  out_.start_order(first_iteration);
  if (lanes_ > 1) ctx_.pool.allow_concurrent_calls(true);
  make_lane_operators();
}

CpuStage::~CpuStage() {
  stop();
  join();
}

int CpuStage::choose_lanes() const {
  const auto& o = ctx_.options;
  if (o.cpu_lanes == 1) return 1;
  // External sources may end an epoch mid-way; on_error="skip" runs the readers again inside an
  // iteration; num_threads="auto" tunes one lane's threads.
  if (o.on_error == "skip" || o.auto_threads) return 1;
  for (size_t n = 0; n < ctx_.ops.size(); ++n) {
    const ops::Operator& op = *ctx_.ops[n];
    if (dynamic_cast<const ops::InputFeed*>(&op)) return 1;
    if (ctx_.graph.nodes[n].backend == ops::Backend::kCpu) continue;
    // The mixed stage shares the pool. A mixed operator that prepares on the host uses its
    // thread indices as slots (nvJPEG's per-thread decoders) from both stages, one caller at a
    // time, and a lane's copy of it could not hand its work to the mixed stage's. A reader on
    // the device keeps state that the lanes' checkpoints (taken by turns) would not see.
    if (op.prepares_on_host() || op.save_state() || op.reader_meta()) return 1;
  }
  // Fewer threads leave little idle time to fill, and the second lane's thread (taking part in
  // its own batches) would be a large share of a small budget.
  if (o.num_threads < 8 && o.cpu_lanes != 2) return 1;
  return o.num_threads >= 2 ? 2 : 1;  // one thread: no pool to share
}

void CpuStage::make_lane_operators() {
  for (int l = 1; l < lanes_; ++l) {
    auto& own = lane_ops_.emplace_back(ctx_.ops.size());
    for (size_t n = 0; n < ctx_.ops.size(); ++n) {
      // Readers keep state (their position): the lanes share them, in turns. The device stages
      // run the mixed and gpu operators, one iteration at a time.
      if (ctx_.graph.nodes[n].backend != ops::Backend::kCpu) continue;
      if (ctx_.ops[n]->save_state() || ctx_.ops[n]->reader_meta()) continue;
      own[n] = ops::make_operator(ctx_.graph.nodes[n]);
    }
  }
}

void CpuStage::start() {
  threads_.reserve(size_t(lanes_));  // no growth (which could throw) with a thread started
  try {
    for (int l = 0; l < lanes_; ++l)
      threads_.push_back(
          start_thread("the CPU stage's lanes", l + 1, lanes_, [this, l] { lane_loop(l); }));
  } catch (...) {
    // The lanes started wait for begin(): stopped, they return.
    stop();
    join();
    throw;
  }
}

void CpuStage::begin() {
  {
    std::lock_guard lock(mutex_);
    begun_ = true;
  }
  changed_.notify_all();
}

void CpuStage::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

void CpuStage::join() {
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

double CpuStage::cpu_seconds() const {
  double s = 0;
  for (const auto& t : threads_) s += thread_cpu_seconds(t);
  return s;
}

bool CpuStage::wait_turn(size_t n, int64_t iteration) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || node_turn_[n] == iteration; });
  return !stopped_;
}

void CpuStage::pass_turn(size_t n, int64_t iteration) {
  {
    std::lock_guard lock(mutex_);
    node_turn_[n] = iteration + 1;
  }
  changed_.notify_all();
}

void CpuStage::lane_loop(int lane) {
  set_thread_name(lane == 0 ? "stoker-cpu" : "stoker-cpu" + std::to_string(lane + 1));
  auto* trace = ctx_.telemetry.trace();
  if (trace) trace->name_thread(lane == 0 ? "cpu stage" : "cpu stage " + std::to_string(lane + 1));
  const double share = 1.0 / double(lanes_);  // the lanes report their mean
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || begun_; });  // not begun: not blocked
  }
  for (;;) {
    const auto blocked = out_.wait_for_room();
    int64_t iteration = 0;
    {
      std::lock_guard lock(mutex_);
      if (stopped_ || !blocked) return;
      iteration = lanes_ > 1 ? next_iteration_++ : next_iteration_;
    }
    ctx_.telemetry.stage_waited(id_, 0, *blocked, share);
    const auto t = Clock::now();
    Iteration it = run_iteration(iteration, lane);
    if (trace) trace->span("iteration", "stage", t, Clock::now(), it.number);
    ctx_.telemetry.stage_ran(id_, seconds_since(t), share);
    if (!out_.push(std::move(it), lanes_ > 1)) return;
  }
}

Iteration CpuStage::run_iteration(int64_t iteration, int lane) {
  Iteration it;
  it.number = iteration;
  SampleReplacement replacement(ctx_);
  std::vector<std::vector<Batch>> values;
  std::vector<std::optional<std::string>> states;
  try {
    values = run_nodes(ctx_.graph.nodes.size(), ctx_.options.batch_size, iteration, replacement,
                       feeds_device_ ? &it.prepared : nullptr, lanes_ > 1 ? &states : nullptr,
                       lane);
  } catch (const EndOfData&) {
    it.end_of_data = true;
    return it;
  } catch (...) {
    it.error = std::current_exception();
    return it;
  }
  if (lanes_ == 1) {
    std::lock_guard lock(mutex_);
    ++next_iteration_;
  }
  // With lanes another lane may have run later iterations of the shared operators already:
  // their states were taken right after this iteration's runs.
  it.after = checkpoints_.snapshot(iteration + 1, lanes_ > 1 ? &states : nullptr);
  if (feeds_device_) {
    it.values = std::move(values);
  } else {
    for (auto& o : ctx_.graph.outputs) it.outputs.push_back(values[size_t(o.node)][size_t(o.output)]);
  }
  return it;
}

bool CpuStage::prepares_on_host(size_t n) const {
  const auto& nodes = ctx_.graph.nodes;
  if (nodes[n].backend != ops::Backend::kMixed || !ctx_.ops[n]->prepares_on_host()) return false;
  for (const auto& in : nodes[n].inputs)
    if (nodes[size_t(in.node)].backend != ops::Backend::kCpu) return false;
  for (const auto& [name, in] : nodes[n].arg_inputs)
    if (nodes[size_t(in.node)].backend != ops::Backend::kCpu) return false;
  return true;
}

std::vector<std::vector<Batch>> CpuStage::run_nodes(
    size_t count, int batch, int64_t iteration, SampleReplacement& replacement,
    std::vector<std::shared_ptr<void>>* prepared, std::vector<std::optional<std::string>>* states,
    int lane) {
  const uint32_t round = replacement.round();
  std::vector<std::vector<Batch>> values(count);
  if (prepared) prepared->assign(count, nullptr);
  if (states) states->assign(count, std::nullopt);
  const bool skip = ctx_.options.on_error == "skip";
  for (size_t n = 0; n < count; ++n) {
    const auto& spec = ctx_.graph.nodes[n];
    // The device stages' nodes run there; mixed ones may prepare here.
    const bool prepare = prepared && prepares_on_host(n);
    if (spec.backend != ops::Backend::kCpu && !prepare) continue;
    ops::Workspace ws = make_workspace(ctx_, n, values, iteration, batch);
    if (!pinned_outputs_.empty() && pinned_outputs_[n]) ws.host_pool = ctx_.pinned_pool;
    // Host work only; a mixed operator's preparation may stage on the device (nvJPEG's CUDA
    // decoder, a batch ahead).
    ws.device_pool = prepare ? ctx_.device_pool : nullptr;
    ws.stream_epoch = round;
    ops::SampleFailures failures, warned;
    if (skip) ws.failures = &failures;
    ws.warnings = &warned;
    // Closing skips what is left of a cpu operator's samples. Not a mixed operator's host
    // part: the mixed stage would take its half-done plan to the GPU.
    if (!prepare) ws.stopping = &ctx_.stopping;
    const std::string context =
        "Error in operator " + spec.describe() + ", iteration " + std::to_string(iteration) + ", ";
    // Lanes: a shared operator's runs of earlier iterations first (another lane may hold one).
    ops::Operator& op = lane_op(lane, n);
    const bool turns = states && takes_turns(n);
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
      // A file that lost bytes under the operator: that is the error, not what the zeros did.
      const auto damaged = damaged_samples(ws);
      if (!damaged.empty())
        rethrow_with_context(std::make_exception_ptr(IOError(damaged.begin()->second)), context);
      rethrow_with_context(std::current_exception(), context);
    }
    // Bytes that were read as zeros because their file shrank: the sample fails like a bad one
    // (that is its error, whatever the operator made of the zeros).
    std::map<int, std::string> failed = failures.by_sample();
    for (auto& [i, message] : damaged_samples(ws)) {
      if (!skip) throw IOError(context + message);
      failed[i] = std::move(message);
    }
    // Closing: the samples were skipped; nothing downstream may use the outputs.
    if (ctx_.stopping) throw RuntimeError("the pipeline is stopping");
    ctx_.telemetry.count_run(n, ws, !prepare, t);  // a mixed node's host part: its time only
    if (turns) {
      (*states)[n] = op.save_state();
      pass_turn(n, iteration);
    }
    if (!prepare) values[n] = std::move(ws.outputs);
    if (!warned.empty()) ctx_.telemetry.samples_warned(spec, warned.by_sample());
    if (failed.empty()) continue;

    // Replace the failed samples: run the nodes before this one (and this one, when it produced
    // values) again for as many new samples. A preparing node prepares the new batch again.
    const std::vector<int> keep = replacement.drop(n, context, failed, batch);
    const size_t redo = prepare ? n : n + 1;
    replacement.next_round();
    auto refill = run_nodes(redo, int(failed.size()), iteration, replacement, nullptr, nullptr,
                            lane);
    SampleReplacement::splice(values, redo, keep, refill);
    if (prepared)
      for (size_t k = 0; k <= n; ++k) (*prepared)[k] = nullptr;
    if (prepare) --n;
  }
  return values;
}

}  // namespace stoker::pipeline
