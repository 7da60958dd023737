#include "stoker/ops/tensor/constant.hpp"

#include <variant>

#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Constant final : public Operator {
 public:
  explicit Constant(const OpSpec& spec) : Operator(spec) {
    const bool f = spec.has_arg("fdata"), i = spec.has_arg("idata");
    STOKER_ENFORCE(f != i, ValueError, "constant: give `fdata` or `idata` (one of them)");
    // As DALI's: float32 for fdata and int32 for idata unless `dtype` says otherwise.
    dtype_ = spec.has_arg("dtype") ? dtype_from_name(spec.arg<std::string>("dtype"))
                                   : (f ? DType::kF32 : DType::kI32);
    if (f) {
      values_ = spec.arg<std::vector<double>>("fdata");
    } else {
      // Integers stay exact: int64 values beyond 2^53 do not pass through double.
      for (int64_t v : spec.arg<std::vector<int64_t>>("idata")) ints_.push_back(v);
    }
    const size_t count = f ? values_.size() : ints_.size();
    std::vector<int64_t> dims = spec.has_arg("shape") ? spec.arg<std::vector<int64_t>>("shape")
                                                      : std::vector<int64_t>{int64_t(count)};
    STOKER_ENFORCE(dims.size() <= size_t(kMaxNdim), ValueError, "constant: ", dims.size(),
                   " dimensions asked for; at most ", kMaxNdim, " are supported");
    for (int64_t d : dims)
      STOKER_ENFORCE(d >= 0, ValueError, "constant: negative extent ", d, " in `shape`");
    check_arg_elements("constant", "shape", dims);
    shape_ = TensorShape(dims);
    STOKER_ENFORCE(count == 1 || int64_t(count) == shape_.volume(), ValueError, "constant: ", count,
                   " values for shape ", shape_.to_string(), " (", shape_.volume(),
                   " elements); give one value (repeated) or one per element");
  }
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    const std::string layout = spec_.has_arg("layout") ? spec_.arg<std::string>("layout") : "";
    Batch& out = add_output(ws, dtype_, std::vector<TensorShape>(size_t(n), shape_), layout);
    const int64_t volume = shape_.volume();
    visit_numeric(dtype_, "constant", [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int i = 0; i < n; ++i) {
        T* o = out.data_as<T>(i);
        for (int64_t k = 0; k < volume; ++k) {
          const size_t at = values_.size() + ints_.size() == 1 ? 0 : size_t(k);
          o[k] = values_.empty() ? cast_value<T>(ints_[at]) : cast_value<T>(values_[at]);
        }
      }
    });
  }

 private:
  DType dtype_;
  std::vector<double> values_;
  std::vector<int64_t> ints_;
  TensorShape shape_;
};

}  // namespace

OpSchema constant_schema() {
  return {
      .name = "constant",
      .doc =
          "The same tensor for every sample: `fdata` or `idata` (one value is repeated) "
          "shaped `shape` (default: the values as a 1-D tensor), converted to `dtype` "
          "(float32 for fdata and int32 for idata by default) with cast's rules. Python's "
          "types.Constant(value) makes one from a number or array.",
      .outputs = {"output"},
      .args = {optional_arg("fdata", ArgType::kFloatList, "The values, as floats.", false),
               optional_arg("idata", ArgType::kIntList, "The values, as integers.", false),
               optional_arg("shape", ArgType::kIntList, "Each sample's shape ([] for a scalar).",
                            false),
               optional_arg("dtype", ArgType::kDType,
                            "The output dtype (default: float32 for fdata, int32 for idata).",
                            false),
               optional_arg("layout", ArgType::kString, "The output's layout.", false)},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Constant>(s); },
      .example = OpExample{.args = {{"idata", std::vector<int64_t>{1}}}},
  };
}

}  // namespace stoker::ops
