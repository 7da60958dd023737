#include "stoker/ops/tensor/one_hot.hpp"

#include <algorithm>
#include <cstring>

#include "stoker/kernels/tensor/one_hot.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::visit_one_hot;

class OneHot : public Operator {
 public:
  explicit OneHot(const OpSpec& spec)
      : Operator(spec),
        classes_(spec.arg<int64_t>("num_classes")),
        axis_(spec.arg<int64_t>("axis")),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))),
        on_(spec.arg<double>("on_value")),
        off_(spec.arg<double>("off_value")) {
    STOKER_ENFORCE(classes_ >= 0, ValueError, "one_hot: num_classes must be 0 or more, got ",
                   classes_);
    check_arg_elements("one_hot", "num_classes", std::vector<int64_t>{classes_});
    if (spec.has_arg("axis_name")) {
      const auto name = spec.arg<std::string>("axis_name");
      STOKER_ENFORCE(name.size() == 1, ValueError,
                     "one_hot: axis_name must be a single character, got '", name, "'");
      axis_name_ = name;
    }
    visit_one_hot(dtype_, "one_hot output", [](auto) {});
  }

 protected:
  struct Plan {
    std::vector<TensorShape> shapes;
    std::vector<int64_t> outer, inner;  // each sample as outer x inner labels
    TensorLayout layout;
  };

  Plan plan(const Batch& in) const {
    visit_one_hot(in.dtype(), "one_hot input", [](auto) {});
    const int n = in.size();
    const int ndim = std::max(in.sample_ndim(), 0);
    STOKER_ENFORCE(axis_ >= -1 && axis_ <= ndim, ValueError, "one_hot: axis ", axis_,
                   " is out of range for ", ndim, "-D input (expected -1 to ", ndim, ")");
    // DALI's legacy rule: when `axis` is not given and every sample holds one label, whatever
    // its shape, each becomes a vector of num_classes values.
    bool scalars = !spec_.has_arg("axis");
    for (int i = 0; i < n && scalars; ++i) scalars = in.shape(i).volume() == 1;
    const int out_ndim = scalars ? 1 : ndim + 1;
    const int at = axis_ < 0 ? out_ndim - 1 : int(axis_);
    Plan p;
    for (int i = 0; i < n; ++i) {
      const TensorShape& s = in.shape(i);
      if (scalars) {
        p.shapes.push_back(TensorShape{classes_});
        p.outer.push_back(1), p.inner.push_back(1);
        continue;
      }
      std::vector<int64_t> dims(s.dims().begin(), s.dims().begin() + at);
      dims.push_back(classes_);
      dims.insert(dims.end(), s.dims().begin() + at, s.dims().end());
      check_arg_elements("one_hot", "num_classes", dims, i);
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < s.ndim(); ++d) (d < at ? outer : inner) *= s[d];
      p.shapes.emplace_back(std::move(dims));
      p.outer.push_back(outer), p.inner.push_back(inner);
    }
    if (!axis_name_.empty()) {
      const TensorLayout& l = in.layout();
      if (scalars) {
        p.layout = axis_name_;
      } else {
        STOKER_ENFORCE(l.ndim() == ndim, ValueError,
                       "one_hot: axis_name needs the input's layout "
                       "to name its ",
                       ndim, " axes; got '", l.str(), "'");
        p.layout = l.str().substr(0, size_t(at)) + axis_name_ + l.str().substr(size_t(at));
      }
    }
    return p;
  }

  int64_t classes_, axis_;
  DType dtype_;
  double on_, off_;
  std::string axis_name_;
};

class OneHotCpu final : public OneHot {
 public:
  using OneHot::OneHot;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Plan p = plan(in);
    Batch& out = add_output(ws, dtype_, p.shapes, p.layout);
    for_each_sample(ws, in.size(), [&](int i, int) {
      visit_one_hot(in.dtype(), "one_hot input", [&](auto it) {
        using In = typename decltype(it)::type;
        visit_one_hot(dtype_, "one_hot output", [&](auto ot) {
          using Out = typename decltype(ot)::type;
          kernels::one_hot_cpu(out.data_as<Out>(i), in.data_as<const In>(i), p.outer[size_t(i)],
                               classes_, p.inner[size_t(i)], kernels::one_hot_value<Out>(on_),
                               kernels::one_hot_value<Out>(off_));
        });
      });
    });
  }
};

#ifdef STOKER_HAVE_CUDA
// One launch for the batch (kernels/tensor/one_hot_gpu.cu), equal to the CPU's.
class OneHotGpu final : public OneHot {
 public:
  using OneHot::OneHot;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Plan p = plan(in);
    Batch& out = add_output(ws, dtype_, p.shapes, p.layout);
    const int n = in.size();
    if (n == 0) return;
    std::vector<kernels::OneHotGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      desc[size_t(i)] = {in.data(i), out.data(i), p.outer[size_t(i)], p.inner[size_t(i)]};
      most = std::max(most, p.shapes[size_t(i)].volume());
    }
    uint64_t on = 0, off = 0;
    visit_one_hot(dtype_, "one_hot output", [&](auto ot) {
      using Out = typename decltype(ot)::type;
      const Out a = kernels::one_hot_value<Out>(on_), b = kernels::one_hot_value<Out>(off_);
      std::memcpy(&on, &a, sizeof(Out));
      std::memcpy(&off, &b, sizeof(Out));
    });
    auto device = upload(ws, desc);
    cuda_check(kernels::one_hot_gpu(static_cast<const kernels::OneHotGpuSample*>(device->data()), n,
                                    most, classes_, in.dtype(), dtype_, on, off, ws.stream),
               "one_hot (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema one_hot_schema() {
  return {
      .name = "one_hot",
      .doc =
          "One-hot encoding: a new axis of `num_classes` values at `axis` (default: last), "
          "on_value where the index along it is the label and off_value elsewhere; labels "
          "outside [0, num_classes) give off_value everywhere. Labels are read as DALI reads "
          "them: floats truncated toward zero, integers by their low 32 bits. As in DALI, when "
          "`axis` is not given and every sample holds one label (whatever its shape), the "
          "outputs are vectors of num_classes values.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"num_classes", ArgType::kInt, "The number of classes.", int64_t{0}},
               {"axis", ArgType::kInt,
                "Where the new axis goes in the output (-1: last; 0 to the input's number of "
                "axes).",
                int64_t{-1}},
               optional_arg("axis_name", ArgType::kString,
                            "The new axis's layout name (one character; the input's layout must "
                            "name all its axes). Not given: the output has no layout.",
                            false),
               {"dtype", ArgType::kDType, "The output dtype: an integer type, float32 or float64.",
                std::string("float32")},
               {"on_value", ArgType::kFloat,
                "The value for the label's class (a float32, converted to dtype by truncation "
                "as in DALI).",
                1.0},
               {"off_value", ArgType::kFloat, "The value elsewhere (as on_value).", 0.0}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<OneHotCpu>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<OneHotGpu>(s); },
#endif
      .example = OpExample{.args = {{"num_classes", int64_t{10}}}, .dtype = "int32", .layout = ""},
  };
}

}  // namespace stoker::ops
