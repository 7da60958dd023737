#include "stoker/ops/random/batch_permutation.hpp"

#include "stoker/kernels/random/permutation.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class BatchPermutation final : public Operator {
 public:
  explicit BatchPermutation(const OpSpec& spec)
      : Operator(spec),
        repetitions_(spec.arg<bool>("allow_repetitions")),
        no_fixed_points_(spec.arg<bool>("no_fixed_points")) {}
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    Batch& out =
        add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n), TensorShape{}), {});
    if (n == 0) return;
    // One draw for the whole batch, from the stream of the iteration's first sample: it
    // depends on the seed and the iteration, never on threads.
    auto rng = sample_rng(ws, 0);
    const auto order = repetitions_ ? kernels::random_indices(n, no_fixed_points_, rng)
                                    : kernels::random_permutation(n, no_fixed_points_, rng);
    for (int i = 0; i < n; ++i) out.data_as<int32_t>(i)[0] = order[size_t(i)];
  }

 private:
  bool repetitions_, no_fixed_points_;
};

}  // namespace

OpSchema batch_permutation_schema() {
  return {
      .name = "batch_permutation",
      .doc =
          "Random indices of the batch's samples, one int32 scalar per sample (as DALI), for "
          "fn.permute_batch: a uniform permutation; with no_fixed_points, one without out[i] == "
          "i (as DALI's: a random single cycle through all samples); with allow_repetitions, "
          "independent uniform draws (never i at position i with no_fixed_points). "
          "no_fixed_points is ignored for a batch of 1. One draw per iteration.",
      .outputs = {"indices"},
      .args = {{"allow_repetitions", ArgType::kBool,
                "Draw each index independently (repetitions and omissions).", false},
               {"no_fixed_points", ArgType::kBool, "Never out[i] == i.", false}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<BatchPermutation>(s); },
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
