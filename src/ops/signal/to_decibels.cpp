#include "stoker/ops/signal/to_decibels.hpp"

#include "stoker/kernels/signal/decibels.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "to_decibels";

class ToDecibels : public Operator {
 public:
  explicit ToDecibels(const OpSpec& spec) : Operator(spec) {
    args_.multiplier = float(spec.arg<double>("multiplier"));
    args_.cutoff_db = float(spec.arg<double>("cutoff_db"));
    args_.reference = float(spec.arg<double>("reference"));
    // Unset is the sample's maximum; a given 0 is refused (as DALI).
    STOKER_ENFORCE(!spec.has_arg("reference") || args_.reference != 0.f, ValueError, kOp,
                   ": reference must not be 0 (leave it unset for each sample's maximum)");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError, kOp, ": the input must be float32, got ",
                   dtype_name(in.dtype()));
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::to_decibels_cpu(in.data_as<const float>(i), in.shape(i).volume(), args_,
                               out.data_as<float>(i));
    });
  }

 private:
  kernels::Decibels args_;
};

}  // namespace

OpSchema to_decibels_schema() {
  return {
      .name = "to_decibels",
      .doc =
          "Converts magnitudes to decibels (as DALI): multiplier * log10(max(min_ratio, x / "
          "reference)) with min_ratio = 10^(cutoff_db / multiplier); reference unset: each "
          "sample's maximum (an all-zero sample is at cutoff_db). float32, any shape; the "
          "layout is the input's.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"multiplier", ArgType::kFloat,
                "The log10's factor: 10 for power, 20 for "
                "magnitude.",
                10.0},
               {"reference", ArgType::kFloat,
                "The reference magnitude (unset: each sample's maximum; 0 is refused).", 0.0},
               {"cutoff_db", ArgType::kFloat, "The lowest output (dB).", -200.0}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ToDecibels>(s); },
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
