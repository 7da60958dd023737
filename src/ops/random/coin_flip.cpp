#include "stoker/ops/random/coin_flip.hpp"

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

class CoinFlip final : public Operator {
 public:
  explicit CoinFlip(const OpSpec& spec)
      : Operator(spec),
        shape_(shape_arg(spec)),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {}
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    const std::vector<TensorShape> shapes = sample_shapes(spec_, ws, shape_);
    Batch& out = add_output(ws, dtype_, shapes, {});
    visit_numeric(dtype_, "random.coin_flip output", [&](auto tag) {
      using T = typename decltype(tag)::type;
      for_each_sample(ws, n, [&](int i, int) {
        double p = scalar_arg(ws, "probability", i);
        STOKER_ENFORCE(p >= 0 && p <= 1, ValueError, "probability must be in [0, 1], got ", p);
        auto rng = sample_rng(ws, i);
        T* o = out.data_as<T>(i);
        for (int64_t k = 0; k < shapes[size_t(i)].volume(); ++k)
          o[k] = cast_value<T>(rng.bernoulli(float(p)) ? 1 : 0);
      });
    });
  }

 private:
  TensorShape shape_;
  DType dtype_;
};

}  // namespace

OpSchema coin_flip_schema() {
  return {
      .name = "random.coin_flip",
      .doc =
          "Bernoulli draws: 1 with `probability`, else 0 (of `dtype`), one tensor of `shape` (or "
          "of the shape_like input's shape) per sample. Each sample's draws depend only on the "
          "pipeline seed, this operator and "
          "the sample's index.",
      .inputs = {"shape_like"},
      .optional_inputs = 1,
      .outputs = {"flips"},
      .args = {{"probability", ArgType::kFloat, "Probability of 1.", 0.5, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}},
               {"dtype", ArgType::kDType, "The output dtype (types.BOOL for a predicate).",
                std::string("int32")}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<CoinFlip>(s); },
      .example = OpExample{},
      .deprecated_names = {"coin_flip"},
  };
}

}  // namespace stoker::ops
