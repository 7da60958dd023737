#include "stoker/ops/tensor/cast.hpp"

#include <algorithm>
#include <cstring>

#include "stoker/kernels/tensor/cast_gpu.hpp"
#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"

namespace stoker::ops {
namespace {

// Where the output dtype comes from.
enum class Target { kArg, kLike, kSame };

class Cast : public Operator {
 public:
  Cast(const OpSpec& spec, Target target) : Operator(spec), target_(target) {
    if (target_ == Target::kArg) dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
  }
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const DType dtype = out_dtype(ws);
    Batch& out = add_output(ws, dtype, in.shapes(), in.layout());
    if (dtype == in.dtype()) {  // nothing to convert: the bytes are copied as they are
      for_each_sample(ws, in.size(), [&](int i, int) {
        const size_t bytes = in.sample(i).num_bytes();
        if (bytes) std::memcpy(out.data(i), in.data(i), bytes);
      });
      return;
    }
    for_each_sample(ws, in.size(), [&](int i, int) {
      visit_numeric(in.dtype(), "cast input", [&](auto it) {
        using In = typename decltype(it)::type;
        visit_numeric(dtype, "cast output", [&](auto ot) {
          using Out = typename decltype(ot)::type;
          kernels::cast_cpu(in.data_as<const In>(i), in.shape(i).volume(), out.data_as<Out>(i));
        });
      });
    });
  }

 protected:
  DType out_dtype(const Workspace& ws) const {
    switch (target_) {
      case Target::kArg:
        return dtype_;
      case Target::kLike:
        return ws.input(1).dtype();
      case Target::kSame:
        break;
    }
    return ws.input(0).dtype();
  }

  Target target_;
  DType dtype_ = DType::kU8;
};

#ifdef STOKER_HAVE_CUDA
// cast between any numeric dtypes: one launch per batch, the CPU's rules (kernels/tensor/cast_gpu).
class CastGpu final : public Cast {
 public:
  using Cast::Cast;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const DType dtype = out_dtype(ws);
    Batch& out = add_output(ws, dtype, in.shapes(), in.layout());
    if (n == 0) return;
    if (dtype == in.dtype()) {
      // A device-to-device copy; samples back to back on both sides go as one.
      std::vector<CopyPiece> pieces;
      for (int i = 0; i < n; ++i)
        pieces.push_back({out.data(i), in.data(i), in.sample(i).num_bytes()});
      for (const CopyPiece& p : merge_adjacent_copies(pieces))
        copy_device_async(p.dst, p.src, p.bytes, ws.stream);
      return;
    }
    std::vector<kernels::CastGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      desc[size_t(i)] = {in.data(i), out.data(i), in.shape(i).volume()};
      most = std::max(most, desc[size_t(i)].count);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::cast_gpu(static_cast<const kernels::CastGpuSample*>(device->data()), n,
                                 most, in.dtype(), dtype, ws.stream),
               spec_.schema->name + " (gpu): launching the kernel");
  }
};
#endif

template <Target T>
OpSchema::Factory cpu_factory() {
  return [](const OpSpec& s) { return std::make_unique<Cast>(s, T); };
}
template <Target T>
OpSchema::Factory gpu_factory() {
#ifdef STOKER_HAVE_CUDA
  return [](const OpSpec& s) { return std::make_unique<CastGpu>(s, T); };
#else
  return {};
#endif
}

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
      .make_cpu = cpu_factory<Target::kArg>(),
      .make_gpu = gpu_factory<Target::kArg>(),
      .example = OpExample{.args = {{"dtype", std::string("float32")}}},
  };
}

OpSchema cast_like_schema() {
  return {
      .name = "cast_like",
      .doc =
          "Converts `input` to the dtype of `reference` (whose values are not read), with "
          "cast's rules; the shape and layout are the input's.",
      .inputs = {"input", "reference"},
      .outputs = {"output"},
      .make_cpu = cpu_factory<Target::kLike>(),
      .make_gpu = gpu_factory<Target::kLike>(),
      .example = OpExample{.input_dtypes = {{1, "float32"}}},
  };
}

OpSchema copy_schema() {
  return {
      .name = "copy",
      .doc = "A copy of the input (new memory; same dtype, shapes and layout).",
      .inputs = {"input"},
      .outputs = {"output"},
      .make_cpu = cpu_factory<Target::kSame>(),
      .make_gpu = gpu_factory<Target::kSame>(),
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
