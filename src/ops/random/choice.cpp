#include "stoker/ops/random/choice.hpp"

#include <cmath>
#include <type_traits>

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

// Picks from `a` (a list of values, or n meaning 0..n-1) with probabilities `p` (uniform when
// unset): one uniform draw per element, walked through the cumulative probabilities.
class Choice final : public Operator {
 public:
  explicit Choice(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {}
  void run(Workspace& ws) override {
    const int n = ws.num_samples();
    // Values from a per-sample input keep its type (DALI's rule); a list's are int32 or float.
    auto given = ws.arg_inputs.find("a");
    const DType dtype = given != ws.arg_inputs.end() ? given->second->dtype()
                        : spec_.arg<bool>("integer") ? DType::kI32
                                                     : DType::kF32;
    STOKER_ENFORCE(dtype != DType::kF16 && dtype != DType::kBF16, TypeError,
                   "random.choice: `a` of type ", dtype_name(dtype), " is not supported");
    const std::vector<TensorShape> shapes = sample_shapes(spec_, ws, shape_);
    Batch& out = add_output(ws, dtype, shapes, {});
    for_each_sample(ws, n, [&](int i, int) {
      auto a = list_arg(ws, "a", i);
      STOKER_ENFORCE(!a.empty(), ValueError, "random.choice: `a` is empty");
      if (a.size() == 1 && !spec_.arg<bool>("a_is_list")) {  // n: the values 0..n-1
        const int64_t count = int64_t(a[0]);
        STOKER_ENFORCE(count >= 1 && double(count) == a[0], ValueError,
                       "random.choice: a must be a positive integer or a list, got ", a[0]);
        a.resize(size_t(count));
        for (int64_t k = 0; k < count; ++k) a[size_t(k)] = double(k);
      }
      std::vector<double> p;
      if (spec_.has_arg("p") || ws.arg_inputs.count("p")) p = list_arg(ws, "p", i);
      if (p.empty()) p.assign(a.size(), 1.0 / double(a.size()));
      STOKER_ENFORCE(p.size() == a.size(), ValueError, "random.choice: p has ", p.size(),
                     " probabilities for ", a.size(), " values");
      double total = 0;
      for (double v : p) {
        STOKER_ENFORCE(v >= 0, ValueError, "random.choice: negative probability ", v);
        total += v;
      }
      STOKER_ENFORCE(std::fabs(total - 1) < 1e-4, ValueError,
                     "random.choice: probabilities sum to ", total, ", not 1");
      auto rng = sample_rng(ws, i);
      visit_numeric(dtype, "random.choice output", [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_same_v<T, float16> && !std::is_same_v<T, bfloat16>) {
          T* dst = out.data_as<T>(i);
          for (int64_t k = 0; k < shapes[size_t(i)].volume(); ++k) {
            const double u = double(rng.uniform()) * total;
            size_t pick = 0;
            for (double acc = p[0]; pick + 1 < p.size() && u >= acc; acc += p[++pick]) {
            }
            dst[k] = T(a[pick]);
          }
        }
      });
    });
  }

 private:
  TensorShape shape_;
};

}  // namespace

OpSchema choice_schema() {
  return {
      .name = "random.choice",
      .doc =
          "Draws from `a` — a list of values, or an integer n for 0..n-1 — with probabilities "
          "`p` (uniform by default), one tensor of `shape` (or of the shape_like input's shape) "
          "per sample: per element, a uniform "
          "draw u in [0, 1) picks the first value whose cumulative probability exceeds u. "
          "int32 output for integer values, float32 otherwise; values from a per-sample input keep "
          "its type. In Python: "
          "fn.random.choice(a, shape_like=None, p=None, shape=None).",
      .inputs = {"shape_like"},
      .optional_inputs = 1,
      .outputs = {"values"},
      .args = {{"a", ArgType::kFloatList, "Values, or [n] for 0..n-1.", std::nullopt, true},
               {"p", ArgType::kFloatList, "Probabilities (sum 1).", std::nullopt, true, true},
               {"a_is_list", ArgType::kBool, "`a` is a list even with one value.", false},
               {"integer", ArgType::kBool, "Output int32 (the values are integers).", false},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Choice>(s); },
      .example = OpExample{.args = {{"a", std::vector<double>{1, 2, 3}}}},
  };
}

}  // namespace stoker::ops
