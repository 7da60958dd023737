#include "stoker/ops/tensor/shapes.hpp"

#include <vector>

#include "stoker/ops/host_values.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// The shapes are host metadata for both backends: the gpu one writes them to device memory
// with one copy and never waits for (or reads) the input's data.
class Shapes final : public Operator {
 public:
  explicit Shapes(const OpSpec& spec)
      : Operator(spec), dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {
    STOKER_ENFORCE(dtype_ != DType::kBool, ValueError,
                   "shapes: `dtype` must be a numeric type, got bool");
  }
  void run(Workspace& ws) override {
    const Batch& in = *ws.inputs[0];
    const int n = in.size();
    const int ndim = n ? in.shape(0).ndim() : 0;
    std::vector<TensorShape> shapes(size_t(n), TensorShape{int64_t(ndim)});
    Batch& out = add_output(ws, dtype_, shapes, TensorLayout(""));
    const size_t size = dtype_size(dtype_);
    std::vector<uint8_t> host(size_t(n) * size_t(ndim) * size);
    visit_numeric(dtype_, "shapes", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = reinterpret_cast<T*>(host.data());
      for (int i = 0; i < n; ++i)
        for (auto d : in.shape(i).dims()) *o++ = cast_value<T>(d);
    });
    copy_host_values(ws, out, host.data(), host.size());
  }

 private:
  DType dtype_;
};

}  // namespace

OpSchema shapes_schema() {
  return {
      .name = "shapes",
      .doc = "Each sample's shape as a 1-D tensor of `dtype` (one extent per dimension; a "
             "sequence's frame count included). DataNode.shape() is the same operator.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"dtype", ArgType::kDType, "The type the extents are converted to.",
                std::string("int64")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Shapes>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<Shapes>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = "HWC"},
  };
}

}  // namespace stoker::ops
