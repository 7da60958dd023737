// The CPU stage's threads. Usually one: it runs the cpu operators of one iteration after
// another, each operator's samples in parallel on the pool, and waits for the slowest thread at
// the end of every operator's batch; meanwhile the pool's other threads have nothing to do, as
// they have while the stage's thread runs an iteration's serial parts (a reader handing over
// its samples). For CPU-only pipelines with many threads that idle time is about 1.3 of 16
// cores (docs/findings.md: 14.2 cores busy, against 15.6 for two pipelines sharing
// the machine). So there, two lanes each run whole iterations, taking the next one when they
// finish, on one pool that takes calls from both at once: the threads one lane's batch leaves
// idle work on the other's. The second lane runs its own copies of the stateless operators
// (their results depend only on the workspace: same batches), so both lanes may be in the same
// operator, e.g. each decoding its batch; operators with state (readers) are shared and run
// their iterations in order (a lane waits for its turn), so samples come in the same order.
// Results are delivered in iteration order.
#include <string>

#include "stoker/core/affinity.hpp"
#include "stoker/pipeline/executor.hpp"

namespace stoker::pipeline {

namespace {
using Clock = TraceRecorder::Clock;
}  // namespace

int Executor::choose_lanes() const {
  if (options_.cpu_lanes == 1) return 1;
  // Device stages keep the CPU stage light (their pipelines' CPU work is in the mixed stage,
  // which shares the pool); external sources may end an epoch mid-way; on_error="skip" runs
  // the readers again inside an iteration; num_threads="auto" tunes one lane's threads.
  if (!stages_.empty() || skip_bad_samples() || options_.auto_threads) return 1;
  for (const auto& op : ops_)
    if (dynamic_cast<const ops::InputFeed*>(op.get())) return 1;
  // Fewer threads leave little idle time to fill, and the second lane's thread (taking part in
  // its own batches) would be a large share of a small budget.
  if (options_.num_threads < 8 && options_.cpu_lanes != 2) return 1;
  return options_.num_threads >= 2 ? 2 : 1;  // one thread: no pool to share
}

void Executor::make_lane_operators() {
  lane_ops_.clear();
  for (int l = 1; l < lanes_; ++l) {
    auto& own = lane_ops_.emplace_back(ops_.size());
    for (size_t n = 0; n < ops_.size(); ++n) {
      // Readers keep state (their position): the lanes share them, in turns.
      if (ops_[n]->save_state() || ops_[n]->reader_meta()) continue;
      own[n] = graph_.nodes[n].schema->make_cpu(graph_.nodes[n]);
    }
  }
}

bool Executor::wait_turn(size_t n, int64_t iteration) {
  std::unique_lock lock(mutex_);
  turn_changed_.wait(lock, [&] { return stop_ || node_turn_[n] == iteration; });
  return !stop_;
}

void Executor::pass_turn(size_t n, int64_t iteration) {
  {
    std::lock_guard lock(mutex_);
    node_turn_[n] = iteration + 1;
  }
  turn_changed_.notify_all();
}

void Executor::producer_loop(int lane) {
  set_thread_name(lane == 0 ? "stoker-cpu" : "stoker-cpu" + std::to_string(lane + 1));
  // With device stages, the CPU stage feeds the first one; otherwise the consumer's queue.
  auto& out = stages_.empty() ? queue_ : stages_[0].input;
  if (trace_)
    trace_->name_thread(lane == 0 ? "cpu stage" : "cpu stage " + std::to_string(lane + 1));
  // With several lanes each lane's share of the stage's time (their mean).
  const double share = 1.0 / double(lanes_);
  for (;;) {
    int64_t iteration = 0;
    {
      std::unique_lock lock(mutex_);
      auto t = Clock::now();
      changed_.wait(lock, [&] { return stop_ || started_; });  // not started: not blocked
      t = Clock::now();
      changed_.wait(lock, [&] { return stop_ || int(out.size()) < cpu_depth_; });
      cpu_stats_.blocked += seconds_since(t) * share;
      if (stop_) return;
      // One lane: iteration_ advances when an iteration succeeds (an external source's end of
      // epoch takes none); lanes take theirs here.
      iteration = lanes_ > 1 ? iteration_++ : iteration_;
    }
    const auto t = Clock::now();
    Result r = run_iteration(iteration, lane);
    if (trace_) trace_->span("iteration", "stage", t, Clock::now(), r.iteration);
    {
      std::lock_guard lock(mutex_);
      cpu_stats_.busy += seconds_since(t) * share;
      cpu_stats_.iterations += 1;
    }
    if (!deliver(std::move(r), out, lanes_ > 1)) return;
  }
}

}  // namespace stoker::pipeline
