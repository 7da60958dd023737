#include "stoker/ops/random/normal.hpp"

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

class Normal final : public Operator {
 public:
  explicit Normal(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {}
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    Batch& out = add_output(ws, DType::kF32, std::vector<TensorShape>(size_t(n), shape_), {});
    for_each_sample(ws, n, [&](int i, int) {
      const double mean = scalar_arg(ws, "mean", i), stddev = scalar_arg(ws, "stddev", i);
      STOKER_ENFORCE(stddev >= 0, ValueError, "stddev must be >= 0, got ", stddev);
      auto rng = sample_rng(ws, i);
      float* o = out.data_as<float>(i);
      for (int64_t k = 0; k < shape_.volume(); ++k) o[k] = float(mean + stddev * rng.normal());
    });
  }

 private:
  TensorShape shape_;
};

}  // namespace

OpSchema normal_schema() {
  return {
      .name = "random.normal",
      .doc =
          "Normal float32 draws with `mean` and `stddev` (Box-Muller on the sample's Philox "
          "stream), one tensor of `shape` per sample.",
      .outputs = {"values"},
      .args = {{"mean", ArgType::kFloat, "Mean.", 0.0, true},
               {"stddev", ArgType::kFloat, "Standard deviation (>= 0).", 1.0, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Normal>(s); },
      .example = OpExample{},
      .deprecated_names = {"normal_distribution"},
  };
}

}  // namespace stoker::ops
