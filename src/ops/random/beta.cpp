#include "stoker/ops/random/beta.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stoker/kernels/random/beta.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Beta final : public Operator {
 public:
  explicit Beta(const OpSpec& spec)
      : Operator(spec), dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {
    STOKER_ENFORCE(dtype_ == DType::kF32 || dtype_ == DType::kF64, TypeError, "random.beta: dtype ",
                   dtype_name(dtype_), " is not supported (float32 or float64)");
    STOKER_ENFORCE(!(!spec.inputs.empty() && spec.given("shape")), ValueError,
                   "random.beta: give `shape` or a shape_like input, not both");
  }
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    const bool like = !ws.inputs.empty();
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    std::vector<double> alpha(static_cast<size_t>(n)), beta(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      alpha[size_t(i)] = scalar_arg(ws, "alpha", i), beta[size_t(i)] = scalar_arg(ws, "beta", i);
      check_parameter("alpha", alpha[size_t(i)]);
      check_parameter("beta", beta[size_t(i)]);
      shapes[size_t(i)] = like ? ws.input(0).shape(i) : shape_of(ws, i);
    });
    Batch& out = add_output(ws, dtype_, shapes, {});
    for_each_sample(ws, n, [&](int i, int) {
      auto rng = sample_rng(ws, i);
      const int64_t count = shapes[size_t(i)].volume();
      for (int64_t k = 0; k < count; ++k) {
        const double v = kernels::beta_draw(alpha[size_t(i)], beta[size_t(i)], rng);
        if (dtype_ == DType::kF32) {
          out.data_as<float>(i)[k] = float(v);
        } else {
          out.data_as<double>(i)[k] = v;
        }
      }
    });
  }

 private:
  static void check_parameter(const char* name, double v) {
    STOKER_ENFORCE(v > 0 && std::isfinite(v), ValueError, "random.beta: `", name,
                   "` must be a positive finite number, got ", v);
  }
  // `shape` for sample i ([] for a scalar when not given).
  TensorShape shape_of(const Workspace& ws, int i) const {
    if (!spec_.given("shape")) return {};
    std::vector<int64_t> dims;
    for (double v : list_arg(ws, "shape", i)) {
      STOKER_ENFORCE(v >= 0 && v == std::floor(v), ValueError,
                     "random.beta: shape extents must be integers >= 0, got ", v);
      dims.push_back(int64_t(std::min(v, double(INT64_MAX / 2))));  // larger: refused below
    }
    check_arg_elements("random.beta", "shape", dims, i);
    return TensorShape(dims);
  }

  DType dtype_;
};

}  // namespace

OpSchema beta_schema() {
  return {
      .name = "random.beta",
      .doc =
          "Beta(alpha, beta) draws in [0, 1] (as DALI's): X = A / (A + B) with A, B gamma "
          "draws (Marsaglia-Tsang); when both parameters are below 1, DALI's log-space form "
          "that keeps A + B from rounding to 0. One tensor per sample of `shape`, of the "
          "shape_like input's shape, or a scalar; float32 (default) or float64, computed in "
          "double precision.",
      .inputs = {"shape_like"},
      .optional_inputs = 1,
      .outputs = {"values"},
      .args = {{"alpha", ArgType::kFloat, "The alpha parameter (> 0).", 1.0, true},
               {"beta", ArgType::kFloat, "The beta parameter (> 0).", 1.0, true},
               optional_arg("shape", ArgType::kIntList,
                            "Shape of each sample (a scalar when "
                            "neither this nor shape_like is given)."),
               {"dtype", ArgType::kDType, "float32 or float64.", std::string("float32")}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Beta>(s); },
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
