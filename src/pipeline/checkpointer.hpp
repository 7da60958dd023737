// The running pipeline's checkpoints: the state after each iteration, taken when the CPU stage
// produces it (the operators' states then, or those taken right after their runs when CPU
// lanes run iterations at once), travels with the iteration, and becomes the pipeline's
// checkpoint when the consumer receives that iteration. Restoring sets the operators' states
// and returns the iteration to continue from.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/pipeline/checkpoint.hpp"
#include "stoker/pipeline/graph.hpp"

namespace stoker::pipeline {

class Checkpointer {
 public:
  Checkpointer(const Graph& graph, const std::vector<std::unique_ptr<ops::Operator>>& ops,
               uint64_t seed)
      : graph_(graph), ops_(ops), seed_(seed) {}

  // Restores every stateful operator from `text`; returns the checkpoint's iteration. Throws
  // ValueError for another seed, an operator this pipeline lacks or one without a state.
  int64_t restore(const std::string& text);
  // The state before `iteration`: the operators' states now, or `states` (per node) taken at
  // their runs.
  Checkpoint snapshot(int64_t iteration,
                      const std::vector<std::optional<std::string>>* states = nullptr) const;
  // The consumer received the iteration `c` follows.
  void delivered(Checkpoint c);
  Checkpoint last_delivered() const;

 private:
  const Graph& graph_;
  const std::vector<std::unique_ptr<ops::Operator>>& ops_;
  uint64_t seed_;
  mutable std::mutex mutex_;
  Checkpoint delivered_;
};

}  // namespace stoker::pipeline
