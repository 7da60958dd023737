#include "stoker/ops/tensor/pad.hpp"

#include <algorithm>
#include <cstring>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/geometry/slice_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"

namespace stoker::ops {
namespace {

class Pad : public Operator {
 public:
  explicit Pad(const OpSpec& spec) : Operator(spec) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    auto shapes = plan(in);
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    if (n == 0) return;
    const int nd = in.shape(0).ndim();
    const size_t es = dtype_size(in.dtype());
    const uint64_t fill = fill_bytes(in.dtype());
    for_each_sample(ws, n, [&](int i, int) {
      kernels::slice_cpu(static_cast<const uint8_t*>(in.sample(i).data), dims_of(in.shape(i)), es,
                         std::vector<int64_t>(size_t(nd), 0), dims_of(shapes[size_t(i)]),
                         reinterpret_cast<const uint8_t*>(&fill),
                         static_cast<uint8_t*>(out.sample(i).data));
    });
  }

 protected:
  // fill_value in the data's type, as bytes (little-endian in the low bytes).
  uint64_t fill_bytes(DType d) const {
    uint64_t bytes = 0;
    visit_numeric(d, "pad", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v = fill_cast<T>(spec_.arg<double>("fill_value"));
      std::memcpy(&bytes, &v, sizeof(T));
    });
    return bytes;
  }

  std::vector<TensorShape> plan(const Batch& in) const {
    const int n = in.size();
    if (n == 0) return {};
    const int nd = in.shape(0).ndim();
    for (int i = 0; i < n; ++i)
      STOKER_ENFORCE(in.shape(i).ndim() == nd, ValueError, "pad: samples have different ranks (",
                     in.shape(0).to_string(), " and ", in.shape(i).to_string(), ")");
    auto axes = spec_.arg<std::vector<int64_t>>("axes");
    if (axes.empty())
      for (int a = 0; a < nd; ++a) axes.push_back(a);
    auto shape_arg = spec_.arg<std::vector<int64_t>>("shape");
    auto align = spec_.arg<std::vector<int64_t>>("align");
    STOKER_ENFORCE(shape_arg.empty() || shape_arg.size() == axes.size(), ValueError,
                   "pad: shape has ", shape_arg.size(), " values for ", axes.size(), " axes");
    STOKER_ENFORCE(align.size() <= 1 || align.size() == axes.size(), ValueError, "pad: align has ",
                   align.size(), " values for ", axes.size(), " axes");
    // Each padded axis: the batch's largest extent (or `shape`), rounded up to `align`. Padding
    // to the batch's largest sample is data, not an argument: never refused.
    double largest = 0;
    for (int i = 0; i < n; ++i) largest = std::max(largest, double(in.shape(i).volume()));
    std::vector<int64_t> target(size_t(nd), -1);
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      STOKER_ENFORCE(a >= 0 && a < nd, ValueError, "pad: axis ", a, " of ", nd, "-D samples");
      int64_t t = shape_arg.empty() ? -1 : shape_arg[k];
      if (t < 0)
        for (int i = 0; i < n; ++i) t = std::max(t, in.shape(i)[int(a)]);
      const int64_t al = align.empty() ? 1 : align[align.size() == 1 ? 0 : k];
      STOKER_ENFORCE(al >= 1, ValueError, "pad: align must be >= 1, got ", al);
      // Bounded before rounding up, which would overflow (arg_limits.hpp).
      check_arg_elements("pad", "shape", std::vector<int64_t>{t}, -1, largest);
      check_arg_elements("pad", "align", std::vector<int64_t>{al});
      target[size_t(a)] = (t + al - 1) / al * al;
    }
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      auto d = dims_of(in.shape(i));
      for (int a = 0; a < nd; ++a) {
        if (target[size_t(a)] < 0) continue;
        STOKER_ENFORCE(d[size_t(a)] <= target[size_t(a)], ValueError, "pad: sample ", i,
                       " of shape ", in.shape(i).to_string(), " is larger than the requested ",
                       target[size_t(a)], " along axis ", a);
        d[size_t(a)] = target[size_t(a)];
      }
      check_arg_elements("pad", "shape and align", d, i, largest);
      shapes.emplace_back(d);
    }
    return shapes;
  }
};

#ifdef STOKER_HAVE_CUDA
class PadGpu final : public Pad {
 public:
  using Pad::Pad;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto shapes = plan(in);
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    std::vector<kernels::StridedCopy> d;
    for (int i = 0; i < in.size(); ++i) {
      const auto od = dims_of(out.shape(i)), id = dims_of(in.shape(i));
      d.push_back(copy_desc(in.data(i), out.data(i), od, dense_strides(od), dense_strides(id), id,
                            "pad", {}, fill_bytes(in.dtype())));
    }
    run_copies(*this, ws, d, dtype_size(in.dtype()));
  }
};
#endif

}  // namespace

OpSchema pad_schema() {
  return {
      .name = "pad",
      .doc =
          "Pads samples at the end of `axes` (default: all) with fill_value: to the batch's "
          "largest extent, or to `shape` (-1: the batch's largest), rounded up to a multiple "
          "of `align`.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"axes", ArgType::kIntList, "Axes to pad.", std::vector<int64_t>{}},
               {"shape", ArgType::kIntList, "Extent per padded axis (-1: batch maximum).",
                std::vector<int64_t>{}},
               {"align", ArgType::kIntList, "Extents become multiples of this (one or per axis).",
                std::vector<int64_t>{}},
               {"fill_value", ArgType::kFloat, "Value of the padding.", 0.0}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Pad>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<PadGpu>(s); },
#endif
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
