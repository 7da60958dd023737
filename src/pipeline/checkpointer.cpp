#include "stoker/pipeline/checkpointer.hpp"

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

Checkpoint Checkpointer::snapshot(int64_t iteration,
                                  const std::vector<std::optional<std::string>>* states) const {
  Checkpoint c;
  c.seed = seed_;
  c.iteration = iteration;
  for (size_t n = 0; n < ops_.size(); ++n) {
    auto state = states ? (*states)[n] : ops_[n]->save_state();
    if (state) c.ops.emplace_back(graph_.nodes[n].name, *state);
  }
  return c;
}

int64_t Checkpointer::restore(const std::string& text) {
  Checkpoint c = Checkpoint::parse(text);
  STOKER_ENFORCE(c.seed == seed_, ValueError, "the checkpoint was taken with seed ", c.seed,
                 " but this pipeline has seed ", seed_,
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
  return c.iteration;
}

void Checkpointer::delivered(Checkpoint c) {
  std::lock_guard lock(mutex_);
  delivered_ = std::move(c);
}

Checkpoint Checkpointer::last_delivered() const {
  std::lock_guard lock(mutex_);
  return delivered_;
}

}  // namespace stoker::pipeline
