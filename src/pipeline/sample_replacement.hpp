// on_error="skip": samples that fail with a data error (ValueError, IOError) are dropped from
// everything the iteration computed so far and replaced by new ones, read by running the nodes
// before the failing one (and it, when it produced values) again for as many samples; a
// replacement may fail too, and is replaced in turn. One SampleReplacement per iteration keeps
// the count (at most 4 x batch_size replacements, then the iteration fails) and the round
// (replacements draw from their own random-stream family: Workspace::stream_epoch).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stoker/pipeline/stage.hpp"

namespace stoker::pipeline {

class SampleReplacement {
 public:
  static constexpr int kMaxPerBatch = 4;  // x batch_size replacements in one iteration
  explicit SampleReplacement(const StageContext& ctx) : ctx_(ctx) {}

  // Node n (its error context `context`) failed these samples of a batch of `batch`: records
  // them with the telemetry and returns the samples to keep. Throws ValueError when nodes up to
  // n include an external source (its samples cannot be read again) or a node that regroups
  // samples (OpSchema::regroups_samples), and RuntimeError beyond the budget.
  std::vector<int> drop(size_t n, const std::string& context,
                        const std::map<int, std::string>& failed, int batch);
  // The round the next replacement runs in (0: the iteration's first pass).
  uint32_t round() const { return round_; }
  uint32_t next_round() { return ++round_; }
  // Nodes [0, count) of `values` keep the samples `keep` and get `refill`'s appended.
  static void splice(std::vector<std::vector<Batch>>& values, size_t count,
                     const std::vector<int>& keep, const std::vector<std::vector<Batch>>& refill);

 private:
  const StageContext& ctx_;
  uint32_t round_ = 0;
  int64_t replaced_ = 0;
};

}  // namespace stoker::pipeline
