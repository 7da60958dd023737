#include "stoker/pipeline/sample_replacement.hpp"

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

std::vector<int> SampleReplacement::drop(size_t n, const std::string& context,
                                         const std::map<int, std::string>& failed, int batch) {
  for (size_t k = 0; k <= n; ++k) {
    if (dynamic_cast<ops::InputFeed*>(ctx_.ops[k].get())) {
      throw ValueError(context + failed.begin()->second +
                       " (on_error='skip' cannot replace samples that come from an "
                       "external_source)");
    }
    // Inside an `if` branch, a batch holds some of the iteration's samples: rerunning the
    // nodes for new samples would not line up with the other branch's.
    if (ctx_.graph.nodes[k].schema->regroups_samples) {
      throw ValueError(context + failed.begin()->second +
                       " (on_error='skip' cannot replace samples in a pipeline whose `if` on "
                       "pipeline values comes before the failing operator; read and decode "
                       "before the `if`)");
    }
  }
  ctx_.telemetry.samples_skipped(ctx_.graph.nodes[n], failed);
  replaced_ += int64_t(failed.size());
  STOKER_ENFORCE(replaced_ <= int64_t(kMaxPerBatch) * ctx_.options.batch_size, RuntimeError,
                 context, "on_error='skip' gave up after replacing ", replaced_,
                 " samples in one batch; the last: ", failed.rbegin()->second);
  std::vector<int> keep;
  for (int i = 0; i < batch; ++i)
    if (!failed.count(i)) keep.push_back(i);
  return keep;
}

void SampleReplacement::splice(std::vector<std::vector<Batch>>& values, size_t count,
                               const std::vector<int>& keep,
                               const std::vector<std::vector<Batch>>& refill) {
  for (size_t k = 0; k < count; ++k)
    for (size_t o = 0; o < values[k].size(); ++o) {
      values[k][o] = values[k][o].select(keep);
      values[k][o].append(refill[k][o]);
    }
}

}  // namespace stoker::pipeline
