#include "stoker/ops/random/uniform.hpp"

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

class Uniform final : public Operator {
 public:
  explicit Uniform(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {
    if (spec.has_arg("values")) {
      values_ = spec.arg<std::vector<double>>("values");
      STOKER_ENFORCE(!values_.empty(), ValueError, "random.uniform: `values` is empty");
    }
  }
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    Batch& out = add_output(ws, DType::kF32, std::vector<TensorShape>(size_t(n), shape_), {});
    for_each_sample(ws, n, [&](int i, int) {
      auto rng = sample_rng(ws, i);
      float* o = out.data_as<float>(i);
      if (!values_.empty()) {
        for (int64_t k = 0; k < shape_.volume(); ++k)
          o[k] = float(values_[rng.below(uint32_t(values_.size()))]);
        return;
      }
      auto range = list_arg(ws, "range", i);
      STOKER_ENFORCE(range.size() == 2 && range[0] <= range[1], ValueError,
                     "range must be [lo, hi] with lo <= hi");
      for (int64_t k = 0; k < shape_.volume(); ++k)
        o[k] = rng.uniform(float(range[0]), float(range[1]));
    });
  }

 private:
  TensorShape shape_;
  std::vector<double> values_;
};

}  // namespace

OpSchema uniform_schema() {
  return {
      .name = "random.uniform",
      .doc =
          "Uniform float32 draws in [range[0], range[1]), or picks from `values` with equal "
          "probability when given; one tensor of `shape` per sample.",
      .outputs = {"values"},
      .args = {{"range", ArgType::kFloatList, "[lo, hi) of the distribution.",
                std::vector<double>{-1.0, 1.0}, true},
               {"values", ArgType::kFloatList, "Discrete values to choose from.", std::nullopt,
                false, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Uniform>(s); },
      .example = OpExample{},
      .deprecated_names = {"uniform"},
  };
}

}  // namespace stoker::ops
