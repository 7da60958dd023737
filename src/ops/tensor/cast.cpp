#include "stoker/ops/tensor/cast.hpp"

#include <algorithm>

#include "stoker/kernels/tensor/cast_gpu.hpp"
#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"

namespace stoker::ops {
namespace {

class Cast : public Operator {
 public:
  explicit Cast(const OpSpec& spec)
      : Operator(spec), dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, dtype_, std::move(shapes), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      visit_numeric(in.dtype(), "cast input", [&](auto it) {
        using In = typename decltype(it)::type;
        visit_numeric(dtype_, "cast output", [&](auto ot) {
          using Out = typename decltype(ot)::type;
          kernels::cast_cpu(in.data_as<const In>(i), in.shape(i).volume(), out.data_as<Out>(i));
        });
      });
    });
  }

 protected:
  DType dtype_;
};

#ifdef STOKER_HAVE_CUDA
// cast between any numeric dtypes: one launch per batch, the CPU's rules (kernels/tensor/cast_gpu).
class CastGpu final : public Cast {
 public:
  using Cast::Cast;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, dtype_, std::move(shapes), in.layout());
    if (n == 0) return;
    std::vector<kernels::CastGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      desc[size_t(i)] = {in.data(i), out.data(i), in.shape(i).volume()};
      most = std::max(most, desc[size_t(i)].count);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::cast_gpu(static_cast<const kernels::CastGpuSample*>(device->data()), n,
                                 most, in.dtype(), dtype_, ws.stream),
               "cast (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema cast_schema() {
  return {
      .name = "cast",
      .doc =
          "Converts to `dtype`. Floats to integers round half away from zero; every "
          "conversion saturates to the output's range (NaN becomes 0); to bool: nonzero.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"dtype", ArgType::kDType, "The output dtype."}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Cast>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<CastGpu>(s); },
#endif
      .example = OpExample{.args = {{"dtype", std::string("float32")}}},
  };
}

}  // namespace stoker::ops
