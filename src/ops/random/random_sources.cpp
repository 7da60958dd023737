// random.coin_flip and random.uniform: per-sample random tensors drawn from each sample's own
// Philox stream, so values depend only on (seed, operator instance, sample index).
#include "stoker/ops/random/random_sources.hpp"

#include <cmath>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

TensorShape shape_arg(const OpSpec& spec) {
  auto dims = spec.arg<std::vector<int64_t>>("shape");
  for (auto d : dims)
    STOKER_ENFORCE(d >= 0, ValueError, spec.schema->name, ": shape extents must be >= 0, got ",
                   format_arg_value(dims));
  return TensorShape(dims);
}

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

class Uniform final : public Operator {
 public:
  explicit Uniform(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {
    if (spec.has_arg("values")) {
      values_ = spec.arg<std::vector<double>>("values");
      STOKER_ENFORCE(!values_.empty(), ValueError, "random.uniform: `values` is empty");
    }
  }
  void run(Workspace& ws) override {
    const int n = ws.batch_size;
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

class Normal final : public Operator {
 public:
  explicit Normal(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {}
  void run(Workspace& ws) override {
    const int n = ws.batch_size;
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

// Picks from `a` (a list of values, or n meaning 0..n-1) with probabilities `p` (uniform when
// unset): one uniform draw per element, walked through the cumulative probabilities.
class Choice final : public Operator {
 public:
  explicit Choice(const OpSpec& spec) : Operator(spec), shape_(shape_arg(spec)) {}
  void run(Workspace& ws) override {
    const int n = ws.batch_size;
    const DType dtype = spec_.arg<bool>("integer") ? DType::kI32 : DType::kF32;
    Batch& out = add_output(ws, dtype, std::vector<TensorShape>(size_t(n), shape_), {});
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
      for (int64_t k = 0; k < shape_.volume(); ++k) {
        const double u = double(rng.uniform()) * total;
        size_t pick = 0;
        for (double acc = p[0]; pick + 1 < p.size() && u >= acc; acc += p[++pick]) {
        }
        if (dtype == DType::kI32)
          out.data_as<int32_t>(i)[k] = int32_t(a[pick]);
        else
          out.data_as<float>(i)[k] = float(a[pick]);
      }
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
          "`p` (uniform by default), one tensor of `shape` per sample: per element, a uniform "
          "draw u in [0, 1) picks the first value whose cumulative probability exceeds u. "
          "int32 output for integer values, float32 otherwise. In Python: "
          "fn.random.choice(a, p=None, shape=None).",
      .outputs = {"values"},
      .args = {{"a", ArgType::kFloatList, "Values, or [n] for 0..n-1.", std::nullopt, true},
               {"p", ArgType::kFloatList, "Probabilities (sum 1).", std::nullopt, true, true},
               {"a_is_list", ArgType::kBool, "`a` is a list even with one value.", false},
               {"integer", ArgType::kBool, "Output int32 (the values are integers).", false},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Choice>(s); },
      .example = OpExample{.args = {{"a", std::vector<double>{1, 2, 3}}}},
  };
}

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
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Normal>(s); },
      .example = OpExample{},
  };
}

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
      .make_cpu = [](const OpSpec& s) { return std::make_unique<CoinFlip>(s); },
      .example = OpExample{},
  };
}

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
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Uniform>(s); },
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
