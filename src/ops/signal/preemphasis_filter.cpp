#include "stoker/ops/signal/preemphasis_filter.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/kernels/signal/preemphasis.hpp"
#include "stoker/kernels/signal/signal_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "preemphasis_filter";

// DALI's types, in and out: the integers and float32/float64 (no bool, no 16-bit floats).
template <typename F>
void visit_signal_type(DType d, const char* what, F&& f) {
  visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
              DType::kU64, DType::kI64, DType::kF32, DType::kF64>(d, what, std::forward<F>(f));
}

kernels::PreemphasisBorder parse_border(const std::string& s) {
  if (s == "zero") return kernels::PreemphasisBorder::kZero;
  if (s == "clamp") return kernels::PreemphasisBorder::kClamp;
  STOKER_ENFORCE(s == "reflect", ValueError, kOp,
                 ": border must be 'zero', 'clamp' or 'reflect', got '", s, "'");
  return kernels::PreemphasisBorder::kReflect;
}

class PreemphasisFilter : public Operator {
 public:
  explicit PreemphasisFilter(const OpSpec& spec)
      : Operator(spec),
        border_(parse_border(spec.arg<std::string>("border"))),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {
    visit_signal_type(dtype_, "preemphasis_filter output", [](auto) {});
  }

  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, dtype_, in.shapes(), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      const float coeff = float(scalar_arg(ws, "preemph_coeff", i));
      visit_signal_type(in.dtype(), "preemphasis_filter input", [&](auto it) {
        using In = typename decltype(it)::type;
        visit_signal_type(dtype_, "preemphasis_filter output", [&](auto ot) {
          using Out = typename decltype(ot)::type;
          kernels::preemphasis_cpu(in.data_as<const In>(i), in.shape(i).volume(), coeff, border_,
                                   out.data_as<Out>(i));
        });
      });
    });
  }

 protected:
  static const Batch& checked_input(const Workspace& ws) {
    const Batch& in = ws.input(0);
    visit_signal_type(in.dtype(), "preemphasis_filter input", [](auto) {});
    return in;
  }

  kernels::PreemphasisBorder border_;
  DType dtype_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: one launch for the batch, each sample's coefficient in its descriptor.
class PreemphasisFilterGpu final : public PreemphasisFilter {
 public:
  using PreemphasisFilter::PreemphasisFilter;
  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, dtype_, in.shapes(), in.layout());
    std::vector<kernels::PreemphasisGpuSample> desc;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      const int64_t n = in.shape(i).volume();
      if (n == 0) continue;
      desc.push_back({in.data(i), out.data(i), n, float(scalar_arg(ws, "preemph_coeff", i))});
      most = std::max(most, n);
    }
    if (desc.empty()) return;
    auto device = upload(ws, desc);
    cuda_check(
        kernels::preemphasis_gpu(static_cast<const kernels::PreemphasisGpuSample*>(device->data()),
                                 int(desc.size()), most, in.dtype(), dtype_, border_, ws.stream),
        "preemphasis_filter (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema preemphasis_filter_schema() {
  return {
      .name = "preemphasis_filter",
      .doc =
          "Applies a pre-emphasis filter (as DALI): y[t] = x[t] - preemph_coeff * x[t-1] over "
          "the sample's elements in order, x[-1] being 0 (border 'zero'), x[0] ('clamp') or "
          "x[1] ('reflect'). The arithmetic is in float (float64 inputs: double); integer "
          "outputs round half away from zero and saturate. Any integer type, float32 or "
          "float64, in and out; the shape and layout are the input's. The gpu backend gives the "
          "cpu backend's values bit for bit.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"preemph_coeff", ArgType::kFloat, "The coefficient (0: a plain conversion).", 0.97,
                /*per_sample=*/true},
               {"border", ArgType::kString, "What x[-1] is: 'zero', 'clamp' or 'reflect'.",
                std::string("clamp")},
               {"dtype", ArgType::kDType, "The output's type.", std::string("float32")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<PreemphasisFilter>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<PreemphasisFilterGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
