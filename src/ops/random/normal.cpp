#include "stoker/ops/random/normal.hpp"

#include <cmath>

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/dtype_arg.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

class Normal final : public Operator {
 public:
  explicit Normal(const OpSpec& spec)
      : Operator(spec), shape_(shape_arg(spec)), dtype_(random_dtype(spec)) {}
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    const std::vector<TensorShape> shapes = sample_shapes(spec_, ws, shape_);
    Batch& out = add_output(ws, dtype_, shapes, {});
    const bool wide = draws_in_double(dtype_);
    visit_numeric(dtype_, "random.normal output", [&](auto tag) {
      using T = typename decltype(tag)::type;
      for_each_sample(ws, n, [&](int i, int) {
        const double mean = scalar_arg(ws, "mean", i), stddev = scalar_arg(ws, "stddev", i);
        STOKER_ENFORCE(stddev >= 0, ValueError, "stddev must be >= 0, got ", stddev);
        auto rng = sample_rng(ws, i);
        T* o = out.data_as<T>(i);
        for (int64_t k = 0; k < shapes[size_t(i)].volume(); ++k)
          o[k] = wide ? cast_value<T>(double(float(mean)) + double(float(stddev)) * normal53(rng))
                      : cast_value<T>(float(mean + stddev * rng.normal()));
      });
    });
  }

 private:
  // Box-Muller on two 53-bit uniforms, for the double draws.
  static double normal53(RandomStream& rng) {
    const double u1 = 1.0 - uniform53(rng), u2 = uniform53(rng);  // u1 in (0, 1]: a finite log
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }
  TensorShape shape_;
  DType dtype_;
};

}  // namespace

OpSchema normal_schema() {
  return {
      .name = "random.normal",
      .doc =
          "Normal draws with `mean` and `stddev` (Box-Muller on the sample's Philox stream), one "
          "tensor of `shape` (or of the shape_like input's shape) per sample, of `dtype` (float32 "
          "by default; integers are the draws "
          "rounded half away from zero and saturated, as DALI's).",
      .inputs = {"shape_like"},
      .optional_inputs = 1,
      .outputs = {"values"},
      .args = {{"mean", ArgType::kFloat, "Mean.", 0.0, true},
               {"stddev", ArgType::kFloat, "Standard deviation (>= 0).", 1.0, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}},
               random_dtype_arg()},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Normal>(s); },
      .example = OpExample{},
      .deprecated_names = {"normal_distribution"},
  };
}

}  // namespace stoker::ops
