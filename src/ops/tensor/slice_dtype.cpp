#include "stoker/ops/tensor/slice_dtype.hpp"

#ifdef STOKER_HAVE_CUDA
#include "stoker/kernels/tensor/cast_gpu.hpp"
#endif

namespace stoker::ops {

std::optional<DType> slice_dtype_arg(const OpSpec& spec) {
  if (!spec.has_arg("dtype")) return std::nullopt;
  return dtype_from_name(spec.arg<std::string>("dtype"));
}

namespace {

Batch converted(const Operator& op, Workspace& ws, const Batch& in, DType dtype) {
  std::vector<TensorShape> shapes;
  for (int i = 0; i < in.size(); ++i) shapes.push_back(in.shape(i));
  const bool device = in.memory() == MemoryKind::kDevice;
  Batch out = device ? Batch::allocate_on(ws.stream, *ws.device_pool, dtype, shapes, in.layout())
                     : Batch::allocate(*ws.host_pool, dtype, shapes, in.layout());
  out.copy_source_info(in);
#ifdef STOKER_HAVE_CUDA
  if (device) {
    std::vector<kernels::CastGpuSample> d;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      d.push_back({in.data(i), out.data(i), in.shape(i).volume()});
      most = std::max(most, d.back().count);
    }
    if (d.empty()) return out;
    auto desc = upload(ws, d);
    cuda_check(
        kernels::cast_gpu(static_cast<const kernels::CastGpuSample*>(desc->data()), int(d.size()),
                          most, in.dtype(), dtype, ws.stream, kernels::CastRule::kSlice),
        op.spec().schema->name + " (gpu): launching the dtype conversion");
    return out;
  }
#endif
  visit_numeric(in.dtype(), "input", [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    visit_dtype<DType::kU8, DType::kF16, DType::kF32>(dtype, "dtype", [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      for (int i = 0; i < in.size(); ++i) {
        const In* src = in.data_as<const In>(i);
        Out* dst = out.data_as<Out>(i);
        const int64_t n = in.shape(i).volume();
        for (int64_t e = 0; e < n; ++e) dst[e] = slice_cast<Out>(src[e]);
      }
    });
  });
  return out;
}

}  // namespace

void run_converted(const Operator& op, Workspace& ws, std::optional<DType> dtype,
                   const std::function<void()>& body) {
  const Batch& in = ws.input(0);
  if (!dtype || *dtype == in.dtype()) return body();
  const std::string& name = op.spec().schema->name;
  STOKER_ENFORCE(*dtype == DType::kF32 || *dtype == DType::kF16 || *dtype == DType::kU8, TypeError,
                 name, ": dtype ", dtype_name(*dtype), " is not supported for ",
                 dtype_name(in.dtype()), " input (float32, float16, uint8 or the input's type)");
  Batch conv = converted(op, ws, in, *dtype);
  const Batch* given = ws.inputs[0];
  ws.inputs[0] = &conv;
  try {
    body();
  } catch (...) {
    ws.inputs[0] = given;
    throw;
  }
  ws.inputs[0] = given;
}

}  // namespace stoker::ops
