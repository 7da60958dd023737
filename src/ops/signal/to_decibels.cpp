#include "stoker/ops/signal/to_decibels.hpp"

#include <algorithm>
#include <vector>

#include "stoker/kernels/signal/decibels.hpp"
#include "stoker/kernels/signal/signal_gpu.hpp"
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
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::to_decibels_cpu(in.data_as<const float>(i), in.shape(i).volume(), args_,
                               out.data_as<float>(i));
    });
  }

 protected:
  static const Batch& checked_input(const Workspace& ws) {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError, kOp, ": the input must be float32, got ",
                   dtype_name(in.dtype()));
    return in;
  }

  kernels::Decibels args_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: one launch for the batch (two without a reference: the samples' maxima
// first).
class ToDecibelsGpu final : public ToDecibels {
 public:
  using ToDecibels::ToDecibels;
  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    std::vector<kernels::DecibelsGpuSample> desc;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      const int64_t n = in.shape(i).volume();
      if (n == 0) continue;
      desc.push_back({in.data_as<const float>(i), out.data_as<float>(i), n, 0});
      most = std::max(most, n);
    }
    if (desc.empty()) return;
    auto device = upload(ws, desc);
    cuda_check(kernels::to_decibels_gpu(static_cast<kernels::DecibelsGpuSample*>(device->data()),
                                        int(desc.size()), most, args_.reference,
                                        kernels::decibels_min_ratio(args_),
                                        kernels::decibels_mul_log2(args_), ws.stream),
               "to_decibels (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema to_decibels_schema() {
  return {
      .name = "to_decibels",
      .doc =
          "Converts magnitudes to decibels (as DALI): multiplier * log10(max(min_ratio, x / "
          "reference)) with min_ratio = 10^(cutoff_db / multiplier); reference unset: each "
          "sample's maximum (an all-zero sample is at cutoff_db). float32, any shape; the "
          "layout is the input's. The gpu backend takes the logarithm in double, rounded to "
          "float, where the cpu backend calls log2f: its values are within 2 ulp of the cpu "
          "backend's (nearly all equal).",
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
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<ToDecibelsGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
