// Sample-major chains: the CPU stage runs a chain of cpu operators that offer prepare_samples()
// (a decoder, then resize, flip, normalize... each fed by the one before) as every member's batch
// part in graph order, then one parallel pass in which each thread takes a sample and runs all
// the members' work on it back to back. Against one pass per operator this saves a wait for the
// slowest thread per operator (with 16 threads on 16 cores a preempted thread holds up every
// barrier) and reads each intermediate image while it is still in the core's cache.
#include <atomic>
#include <cstdlib>

#include "stoker/pipeline/executor.hpp"

namespace stoker::pipeline {

namespace {
using Clock = TraceRecorder::Clock;

bool depends_on(const ops::OpSpec& spec, const std::vector<char>& in_chain, bool args_only) {
  for (const auto& [name, r] : spec.arg_inputs)
    if (in_chain[size_t(r.node)]) return true;
  if (!args_only)
    for (const auto& r : spec.inputs)
      if (in_chain[size_t(r.node)]) return true;
  return false;
}
}  // namespace

void Executor::plan_chains() {
  const size_t count = graph_.nodes.size();
  chain_at_.assign(count, -1);
  order_.clear();
  const char* env = std::getenv("STOKER_SAMPLE_MAJOR");
  const bool enabled = !(env && std::string(env) == "0");
  using SM = ops::Operator::SampleMajor;
  auto mode = [&](size_t n) {
    return graph_.nodes[n].backend == ops::Backend::kCpu ? ops_[n]->sample_major() : SM::kNo;
  };
  size_t n = 0;
  while (n < count) {
    if (!enabled || mode(n) == SM::kNo) {
      order_.push_back(n++);
      continue;
    }
    // A chain begins at n. A later node joins it when it depends on a member through its data
    // inputs only and may follow one (kAny); one that depends on no member runs before the
    // chain (moved up); any other dependent node ends the chain.
    Chain chain;
    chain.members.push_back(n);
    std::vector<char> in_chain(count, 0);
    in_chain[n] = 1;
    std::vector<size_t> before;  // independent nodes among the members, moved up
    size_t k = n + 1;
    for (; k < count; ++k) {
      const auto& spec = graph_.nodes[k];
      if (!depends_on(spec, in_chain, false)) {
        before.push_back(k);
        continue;
      }
      if (mode(k) != SM::kAny || depends_on(spec, in_chain, true)) break;
      chain.members.push_back(k);
      in_chain[k] = 1;
    }
    if (chain.members.size() < 2) {  // nothing to gain: the graph's order
      order_.push_back(n++);
      continue;
    }
    // The nodes moved up end where the chain ends: those after its last member stay after it.
    while (!before.empty() && before.back() > chain.members.back()) before.pop_back();
    order_.insert(order_.end(), before.begin(), before.end());
    chain_at_[n] = int(chains_.size());
    for (size_t x : chain.members) op_times_[x].chain = int(chains_.size());
    order_.insert(order_.end(), chain.members.begin(), chain.members.end());
    // Everything up to the last member is placed (the nodes moved up come before it).
    n = chain.members.back() + 1;
    chains_.push_back(std::move(chain));
  }
  std::vector<char> placed(count, 0);
  for (size_t x : order_) placed[x] += 1;
  for (size_t x = 0; x < count; ++x)
    STOKER_ASSERT(placed[x] == 1, "sample-major planning placed node ", x, " ", int(placed[x]),
                  " times");
}

bool Executor::run_chain(Chain& chain, std::vector<std::vector<Batch>>& values, int batch,
                         uint32_t round) {
  const size_t m = chain.members.size();
  std::vector<int> member_of(graph_.nodes.size(), -1);
  for (size_t k = 0; k < m; ++k) member_of[chain.members[k]] = int(k);
  // Members' outputs stay in their workspaces until the pass is over (the functions refer to
  // them there); later members read them from there.
  std::vector<ops::Workspace> ws;
  ws.reserve(m);
  auto value = [&](const ops::InputRef& r) -> const Batch* {
    const int k = member_of[size_t(r.node)];
    return k >= 0 ? &ws[size_t(k)].outputs[size_t(r.output)]
                  : &values[size_t(r.node)][size_t(r.output)];
  };
  std::vector<ops::SampleFailures> failures(m);
  std::vector<std::function<void(int, int)>> fns(m);
  std::vector<double> prepare_seconds(m);
  const auto start = Clock::now();
  try {
    for (size_t k = 0; k < m; ++k) {
      const size_t n = chain.members[k];
      ws.push_back(cpu_workspace(n, value, batch, round));
      if (options_.skip_bad_samples) ws[k].failures = &failures[k];
      const auto t = Clock::now();
      fns[k] = ops_[n]->prepare_samples(ws[k]);
      prepare_seconds[k] = std::chrono::duration<double>(Clock::now() - t).count();
      STOKER_ASSERT(int(ws[k].outputs.size()) == graph_.nodes[n].num_outputs,
                    graph_.nodes[n].schema->name, " produced ", ws[k].outputs.size(), " outputs");
      if (!failures[k].empty()) return false;  // a refused sample: replaced one node at a time
    }
  } catch (const EndOfData&) {
    throw;
  } catch (...) {
    return false;  // the members run again one at a time, which reports the error in full
  }

  // The pass: per sample, every member's work in graph order; per member, its summed time.
  std::vector<std::atomic<int64_t>> member_ns(m);
  std::atomic<bool> failed{false};
  const std::vector<int> order = ops::largest_first(
      ws[0].inputs.empty() ? nullptr : ws[0].inputs[0], batch, thread_pool_.active_threads());
  auto body = [&](int64_t s, int thread) {
    if (failed.load(std::memory_order_relaxed)) return;  // the batch is run again anyway
    const int i = order.empty() ? int(s) : order[size_t(s)];
    auto t = Clock::now();
    try {
      for (size_t k = 0; k < m; ++k) {
        fns[k](i, thread);
        const auto now = Clock::now();
        member_ns[k].fetch_add(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count(),
            std::memory_order_relaxed);
        t = now;
      }
    } catch (...) {
      failed.store(true, std::memory_order_relaxed);
    }
  };
  const auto pass = Clock::now();
  // As for_each_sample: work too small to share runs on this thread.
  if (chain.last_seconds >= 0 && chain.last_seconds < ops::Operator::kInlineWorkSeconds)
    thread_pool_.run_here(batch, body);
  else
    thread_pool_.parallel_for(batch, body);
  if (failed.load()) return false;
  const double pass_seconds = std::chrono::duration<double>(Clock::now() - pass).count();
  int64_t total_ns = 0;
  for (auto& x : member_ns) total_ns += x.load();
  chain.last_seconds = double(total_ns) * 1e-9;

  // Each member's time: its batch part and its share of the pass by its samples' summed time,
  // laid end to end in the trace from the chain's start.
  auto at = start;
  for (size_t k = 0; k < m; ++k) {
    const double share =
        total_ns > 0 ? double(member_ns[k].load()) / double(total_ns) : 1.0 / double(m);
    const auto end = at + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                              prepare_seconds[k] + share * pass_seconds));
    count_run(chain.members[k], ws[k], true, at, end);
    at = end;
  }
  for (size_t k = 0; k < m; ++k) values[chain.members[k]] = std::move(ws[k].outputs);
  return true;
}

}  // namespace stoker::pipeline
