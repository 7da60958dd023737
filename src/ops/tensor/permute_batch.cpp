#include "stoker/ops/tensor/permute_batch.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// Samples are immutable once produced, so output samples share the input's memory (a sample
// taken twice is one buffer): either backend, no data moves.
class PermuteBatch final : public Operator {
 public:
  using Operator::Operator;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<int> indices;
    if (const auto t = ws.arg_inputs.find("indices"); t != ws.arg_inputs.end()) {
      const Batch& b = *t->second;
      STOKER_ENFORCE(b.dtype() != DType::kBool && !is_float(b.dtype()), TypeError,
                     "permute_batch: `indices` must be integers, got ", dtype_name(b.dtype()));
      for (int i = 0; i < b.size(); ++i) {
        STOKER_ENFORCE(b.shape(i).volume() == 1, ValueError,
                       "permute_batch: `indices` must "
                       "hold one index per sample, sample ",
                       i, " has shape ", b.shape(i).to_string());
        const double v = sample_as_doubles(b, i)[0];
        indices.push_back(int(std::clamp(v, double(INT32_MIN), double(INT32_MAX))));
      }
    } else {
      for (int64_t v : spec_.arg<std::vector<int64_t>>("indices"))
        indices.push_back(int(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)));
    }
    STOKER_ENFORCE(int(indices.size()) == n, ValueError, "permute_batch: ", indices.size(),
                   " indices for a batch of ", n, " samples (one index per sample)");
    for (int i = 0; i < n; ++i)
      STOKER_ENFORCE(indices[size_t(i)] >= 0 && indices[size_t(i)] < n, IndexError,
                     "permute_batch: indices[", i, "] = ", indices[size_t(i)],
                     " is not a sample of a batch of ", n, " (valid: 0 to ", n - 1, ")");
    ws.outputs.push_back(in.select(indices));
  }
};

}  // namespace

OpSchema permute_batch_schema() {
  return {
      .name = "permute_batch",
      .doc =
          "A batch of the input's samples in another order (as DALI): out[i] = "
          "in[indices[i]], with repetitions and omissions allowed; `indices` is a list with one "
          "index per sample, or a per-sample integer scalar (fn.batch_permutation's output). "
          "Each output sample keeps its source's source_info. No data is copied: the output "
          "shares the input's samples.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"indices", ArgType::kIntList,
                "Index of the input sample for each output sample, in [0, batch size).",
                std::nullopt, true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<PermuteBatch>(s); },
      .make_gpu = [](const OpSpec& s) { return std::make_unique<PermuteBatch>(s); },
      // Output sample i is not input sample i: on_error="skip" cannot replace one after it.
      .regroups_samples = true,
      .example = OpExample{.args = {{"indices", std::vector<int64_t>{}}}},
  };
}

}  // namespace stoker::ops
