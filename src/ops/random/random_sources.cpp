// random.coin_flip and random.uniform: per-sample random tensors drawn from each sample's own
// Philox stream, so values depend only on (seed, operator instance, sample index).
#include "stoker/ops/random/random_sources.hpp"

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
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Normal>(s); },
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
  };
}

}  // namespace stoker::ops
