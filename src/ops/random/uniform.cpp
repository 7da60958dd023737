#include "stoker/ops/random/uniform.hpp"

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/dtype_arg.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

class Uniform final : public Operator {
 public:
  explicit Uniform(const OpSpec& spec)
      : Operator(spec), shape_(shape_arg(spec)), dtype_(random_dtype(spec)) {
    if (spec.has_arg("values")) {
      // float32, as DALI keeps them (0.1 as float64 output is 0.10000000149011612).
      for (double v : spec.arg<std::vector<double>>("values")) values_.push_back(float(v));
      STOKER_ENFORCE(!values_.empty(), ValueError, "random.uniform: `values` is empty");
    }
  }
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    const std::vector<TensorShape> shapes = sample_shapes(spec_, ws, shape_);
    Batch& out = add_output(ws, dtype_, shapes, {});
    const bool wide = draws_in_double(dtype_);
    visit_numeric(dtype_, "random.uniform output", [&](auto tag) {
      using T = typename decltype(tag)::type;
      for_each_sample(ws, n, [&](int i, int) {
        auto rng = sample_rng(ws, i);
        T* o = out.data_as<T>(i);
        const int64_t count = shapes[size_t(i)].volume();
        if (!values_.empty()) {
          for (int64_t k = 0; k < count; ++k)
            o[k] = cast_value<T>(values_[rng.below(uint32_t(values_.size()))]);
          return;
        }
        auto range = list_arg(ws, "range", i);
        STOKER_ENFORCE(range.size() == 2 && range[0] <= range[1], ValueError,
                       "range must be [lo, hi] with lo <= hi");
        const float lo = float(range[0]), hi = float(range[1]);  // float32, as DALI's
        if (wide) {
          for (int64_t k = 0; k < count; ++k)
            o[k] = cast_value<T>(double(lo) + (double(hi) - double(lo)) * uniform53(rng));
        } else {
          for (int64_t k = 0; k < count; ++k) o[k] = cast_value<T>(rng.uniform(lo, hi));
        }
      });
    });
  }

 private:
  TensorShape shape_;
  DType dtype_;
  std::vector<float> values_;
};

}  // namespace

OpSchema uniform_schema() {
  return {
      .name = "random.uniform",
      .doc =
          "Uniform draws in [range[0], range[1]), or picks from `values` with equal probability "
          "when given; one tensor of `shape` (or of the shape_like input's shape) per sample, of "
          "`dtype` (float32 by default). As "
          "DALI's: integer outputs are the continuous draws rounded half away from zero (and "
          "saturated), so range [0, 3] gives 1 and 2 twice as often as 0 and 3; `values` are "
          "float32 numbers converted the same way.",
      .inputs = {"shape_like"},
      .optional_inputs = 1,
      .outputs = {"values"},
      .args = {{"range", ArgType::kFloatList, "[lo, hi) of the distribution.",
                std::vector<double>{-1.0, 1.0}, true},
               {"values", ArgType::kFloatList, "Discrete values to choose from.", std::nullopt,
                false, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}},
               random_dtype_arg()},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Uniform>(s); },
      .example = OpExample{},
      .deprecated_names = {"uniform"},
  };
}

}  // namespace stoker::ops
