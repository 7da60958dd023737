#include "stoker/ops/random/coin_flip.hpp"

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

class CoinFlip final : public Operator {
 public:
  explicit CoinFlip(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {}
  void run(Workspace& ws) override {
    const int n = ws.batch_size;
    Batch& out = add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n), shape_), {});
    for_each_sample(ws, n, [&](int i, int) {
      double p = scalar_arg(ws, "probability", i);
      STOKER_ENFORCE(p >= 0 && p <= 1, ValueError, "probability must be in [0, 1], got ", p);
      auto rng = sample_rng(ws, i);
      int32_t* o = out.data_as<int32_t>(i);
      for (int64_t k = 0; k < shape_.volume(); ++k) o[k] = rng.bernoulli(float(p)) ? 1 : 0;
    });
  }

 private:
  TensorShape shape_;
};

}  // namespace

OpSchema coin_flip_schema() {
  return {
      .name = "random.coin_flip",
      .doc =
          "Bernoulli draws: 1 with `probability`, else 0 (int32), one tensor of `shape` per "
          "sample. Each sample's draws depend only on the pipeline seed, this operator and "
          "the sample's index.",
      .outputs = {"flips"},
      .args = {{"probability", ArgType::kFloat, "Probability of 1.", 0.5, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<CoinFlip>(s); },
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
