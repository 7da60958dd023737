#include "stoker/ops/reduce/reductions.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "stoker/kernels/memory/fill_gpu.hpp"
#include "stoker/kernels/reduce/reduce_cpu.hpp"
#include "stoker/kernels/reduce/reduce_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::Reduction;

using kernels::visit_reduction;

// What the batch's reduction is, worked out before any output exists (both backends).
struct ReduceSetup {
  DType out_type = DType::kF32;
  std::vector<TensorShape> shapes;
  TensorLayout layout;
  std::vector<kernels::ReducePlan> plans;
  std::vector<float> norms;
  std::vector<int64_t> mean_strides;  // variance, std_dev: 1, or 0 for one mean per sample
  bool zeros = false;                 // variance, std_dev with empty `axes`: DALI gives zeros
};

// The reductions family: sum, min, max, mean, mean_square, rms (one input) and variance,
// std_dev (the data and its mean), per sample over the same axes.
class Reduce : public Operator {
 public:
  Reduce(const OpSpec& spec, Reduction r)
      : Operator(spec), r_(r), name_(spec.schema->name), keep_dims_(spec.arg<bool>("keep_dims")) {
    STOKER_ENFORCE(!(spec.has_arg("axes") && spec.has_arg("axis_names")), ValueError, name_,
                   ": `axes` and `axis_names` are mutually exclusive; give one of them");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const ReduceSetup s = setup(ws);
    Batch& out = add_output(ws, s.out_type, s.shapes, s.layout);
    const int n = in.size();
    if (s.zeros) {
      for (int i = 0; i < n; ++i)
        std::memset(out.data(i), 0, size_t(s.shapes[size_t(i)].volume()) * sizeof(float));
      return;
    }
    const Batch* mean = with_mean() ? &ws.input(1) : nullptr;
    for_each_sample(ws, n, [&](int i, int) {
      const auto& p = s.plans[size_t(i)];
      const float* m = mean ? mean->data_as<float>(i) : nullptr;
      const int64_t ms = mean ? s.mean_strides[size_t(i)] : 0;
      visit(in.dtype(), s.out_type, [&](auto rt, auto in_tag, auto out_tag) {
        using In = typename decltype(in_tag)::type;
        using Out = typename decltype(out_tag)::type;
        kernels::reduce_cpu<decltype(rt)::value>(in.data_as<In>(i), out.data_as<Out>(i), p, m, ms,
                                                 s.norms[size_t(i)]);
      });
    });
  }

 protected:
  bool with_mean() const { return r_ == Reduction::kVariance || r_ == Reduction::kStdDev; }

  // Calls f(reduction, TypeTag<In>, TypeTag<Out>) for a pair reduce_pair_valid allows.
  template <typename F>
  void visit(DType in, DType out, F&& f) const {
    visit_reduction(r_, [&](auto rt) {
      visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                  DType::kU64, DType::kI64, DType::kF32>(in, name_, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                    DType::kU64, DType::kI64, DType::kF32>(out, name_, [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          if constexpr (kernels::reduce_pair_valid(std::remove_reference_t<decltype(rt)>::value,
                                                   dtype_of<In>, dtype_of<Out>))
            f(rt, in_tag, out_tag);
        });
      });
    });
  }

  // The reduced axes of `ndim`-dimensional samples (a mask), from `axes`, `axis_names` or
  // neither (all axes).
  std::vector<bool> reduced_axes(const Batch& in, int ndim) const {
    std::vector<bool> mask(size_t(ndim), false);
    auto mark = [&](int a, const std::string& what) {
      STOKER_ENFORCE(!mask[size_t(a)], ValueError, name_, ": axis ", a, " is reduced twice (", what,
                     ")");
      mask[size_t(a)] = true;
    };
    if (spec_.has_arg("axis_names")) {
      const auto names = spec_.arg<std::string>("axis_names");
      for (char c : names) {
        const int a = in.layout().find(c);
        STOKER_ENFORCE(a >= 0, ValueError, name_, ": axis_names '", names,
                       "': the input's layout '", in.layout().str(), "' has no '", c, "'");
        mark(a, "axis_names '" + names + "'");
      }
    } else if (spec_.has_arg("axes")) {
      const auto axes = spec_.arg<std::vector<int64_t>>("axes");
      for (int64_t a : axes) {
        STOKER_ENFORCE(a >= -ndim && a < ndim, ValueError, name_, ": axis ", a,
                       " is out of range for sample 0, which has ", ndim, " dimensions (expected ",
                       -ndim, " to ", ndim - 1, ")");
        mark(int(a < 0 ? a + ndim : a), "axes " + format_arg_value(axes));
      }
    } else {
      mask.assign(size_t(ndim), true);
    }
    return mask;
  }

  ReduceSetup setup(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    const int n = in.size();
    ReduceSetup s;
    STOKER_ENFORCE(kernels::reduce_input_supported(in.dtype()), TypeError, name_,
                   ": unsupported input dtype ", dtype_name(in.dtype()),
                   "; expected one of uint8, int8, uint16, int16, uint32, int32, uint64, int64, "
                   "float32");
    s.out_type = kernels::reduce_default_output(r_, in.dtype());
    if (spec_.has_arg("dtype")) {
      s.out_type = dtype_from_name(spec_.arg<std::string>("dtype"));
      std::string allowed;
      for (DType d : {DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                      DType::kU64, DType::kI64, DType::kF32})
        if (kernels::reduce_pair_valid(r_, in.dtype(), d))
          allowed += (allowed.empty() ? "" : ", ") + std::string(dtype_name(d));
      STOKER_ENFORCE(kernels::reduce_pair_valid(r_, in.dtype(), s.out_type), TypeError, name_,
                     ": dtype ", dtype_name(s.out_type), " is not available for ",
                     dtype_name(in.dtype()), " input; expected one of ", allowed);
    }
    const int ndim = n ? in.shape(0).ndim() : 0;
    for (int i = 1; i < n; ++i)
      STOKER_ENFORCE(in.shape(i).ndim() == ndim, ValueError, name_, ": sample ", i, " has ",
                     in.shape(i).ndim(), " dimensions, sample 0 has ", ndim,
                     " (the samples of a batch must agree)");
    STOKER_ENFORCE(ndim <= kernels::kReduceMaxDims, ValueError, name_, ": sample 0 has ", ndim,
                   " dimensions; at most ", kernels::kReduceMaxDims, " are supported");
    const std::vector<bool> mask = n ? reduced_axes(in, ndim) : std::vector<bool>{};
    // An empty `axes` (or `axis_names`) reduces nothing; DALI's variance and std_dev then
    // give zeros rather than (x - mean)^2.
    const bool none = (spec_.has_arg("axes") && spec_.arg<std::vector<int64_t>>("axes").empty()) ||
                      (spec_.has_arg("axis_names") && spec_.arg<std::string>("axis_names").empty());
    s.zeros = with_mean() && none;
    std::string layout;
    for (int d = 0; d < in.layout().ndim() && d < ndim; ++d)
      if (keep_dims_ || !mask[size_t(d)]) layout += in.layout().str()[size_t(d)];
    s.layout = in.layout().empty() ? TensorLayout() : TensorLayout(layout);
    const int64_t ddof = with_mean() ? spec_.arg<int64_t>("ddof") : 0;
    for (int i = 0; i < n; ++i) {
      const TensorShape& sh = in.shape(i);
      std::vector<int64_t> dims;
      for (int d = 0; d < ndim; ++d)
        if (!mask[size_t(d)])
          dims.push_back(sh[d]);
        else if (keep_dims_)
          dims.push_back(1);
      s.shapes.emplace_back(s.zeros ? sh : TensorShape(dims));
      s.plans.push_back(kernels::plan_reduce(sh, mask));
      s.norms.push_back(kernels::reduce_norm(s.plans.back().count - ddof));
    }
    if (with_mean() && !s.zeros) {
      const Batch& mean = ws.input(1);
      STOKER_ENFORCE(mean.dtype() == DType::kF32, TypeError, name_,
                     ": the mean must be float32, got ", dtype_name(mean.dtype()));
      STOKER_ENFORCE(mean.size() == n, ValueError, name_, ": ", mean.size(), " means for ", n,
                     " samples");
      for (int i = 0; i < n; ++i) {
        const int64_t count = mean.shape(i).volume(), outputs = s.plans[size_t(i)].outputs;
        STOKER_ENFORCE(count == outputs || count == 1, ValueError, name_, ": sample ", i,
                       "'s mean has shape ", mean.shape(i).to_string(), " (", count,
                       " values); expected the output's ", s.shapes[size_t(i)].to_string(), " (",
                       outputs, " values) or a single value");
        s.mean_strides.push_back(count == outputs ? 1 : 0);
      }
    }
    return s;
  }

  Reduction r_;
  std::string name_;
  bool keep_dims_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend (kernels/reduce/reduce_gpu): the same setup, one two-pass launch per batch;
// the partial accumulators live in one device scratch buffer.
class ReduceGpu final : public Reduce {
 public:
  using Reduce::Reduce;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const ReduceSetup s = setup(ws);
    Batch& out = add_output(ws, s.out_type, s.shapes, s.layout);
    const int n = in.size();
    if (n == 0) return;
    if (s.zeros) {
      cuda_check(kernels::fill_bytes_gpu(out.data(0), out.total_bytes(), 0, ws.stream),
                 name_ + " (gpu): clearing the output");
      return;
    }
    const Batch* mean = with_mean() ? &ws.input(1) : nullptr;
    const size_t acc = dtype_size(s.out_type);
    std::vector<kernels::ReduceGpuSample> desc(static_cast<size_t>(n));
    std::vector<size_t> offset(static_cast<size_t>(n));
    size_t scratch = 0;
    int64_t items = 0, outputs = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.plan = s.plans[size_t(i)];
      d.in = in.data(i), d.out = out.data(i), d.norm = s.norms[size_t(i)];
      if (mean) d.mean = mean->data_as<float>(i), d.mean_stride = s.mean_strides[size_t(i)];
      const int64_t count = d.plan.nred ? d.plan.count : 0;
      d.chunk_len = kernels::kReduceGpuChunk;
      d.chunks = (count + d.chunk_len - 1) / d.chunk_len;
      offset[size_t(i)] = scratch;
      scratch += (size_t(d.plan.outputs * d.chunks) * acc + 7) / 8 * 8;
      items = std::max(items, d.plan.outputs * d.chunks);
      outputs = std::max(outputs, d.plan.outputs);
    }
    auto partial = ws.device_pool->acquire_on(std::max<size_t>(scratch, 8), ws.stream);
    for (int i = 0; i < n; ++i)
      desc[size_t(i)].partial = static_cast<char*>(partial->data()) + offset[size_t(i)];
    auto device = upload(ws, desc);
    cuda_check(kernels::reduce_gpu(r_, in.dtype(), s.out_type,
                                   static_cast<const kernels::ReduceGpuSample*>(device->data()), n,
                                   items, outputs, ws.stream),
               name_ + " (gpu): launching the kernels");
  }
};
#endif

const char* const kAxesDoc =
    "Axis or axes to reduce, in [-ndim, ndim-1] (negative: from the back). Not given: all "
    "axes; empty: none (each element is converted alone).";
const char* const kAxisNamesDoc =
    "The axes to reduce by their letters in the input's layout (\"HW\" of \"HWC\" is axes "
    "[0, 1]); not with `axes`.";

OpSchema reduce_schema(const std::string& name, Reduction r, const std::string& doc,
                       const std::string& dtype_doc) {
  OpSchema s{
      .name = "reductions." + name,
      .doc = doc +
             " Per sample, over `axes` (as DALI 2.4): the output drops the reduced axes "
             "(keep_dims: keeps them with extent 1) and their layout letters.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {optional_arg("axes", ArgType::kIntList, kAxesDoc, false),
               optional_arg("axis_names", ArgType::kString, kAxisNamesDoc, false),
               {"keep_dims", ArgType::kBool, "Keep the reduced axes, with extent 1.", false}},
      .make_cpu = [r](const OpSpec& sp) { return std::make_unique<Reduce>(sp, r); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [r](const OpSpec& sp) { return std::make_unique<ReduceGpu>(sp, r); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
  if (!dtype_doc.empty())
    s.args.push_back(optional_arg("dtype", ArgType::kDType, dtype_doc, false));
  if (r == Reduction::kVariance || r == Reduction::kStdDev) {
    s.inputs = {"data", "mean"};
    s.args.push_back({"ddof", ArgType::kInt,
                      "Delta degrees of freedom: the sum is divided by (count - ddof).",
                      int64_t{0}});
  }
  return s;
}

const char* const kIntegerDoc =
    " Integer outputs accumulate in their own type (wrapping) and truncate the scaled result.";

}  // namespace

OpSchema reduce_sum_schema() {
  return reduce_schema(
      "sum", Reduction::kSum, "Sum of the elements, accumulated in the output type (wrapping).",
      "Output and accumulation type (default: int64/uint64 for 8 to 32-bit integers, else the "
      "input's): the input's, its 64-bit type, or float32 (64-bit inputs: only their own).");
}
OpSchema reduce_min_schema() {
  return reduce_schema("min", Reduction::kMin,
                       "Smallest element (NaN is skipped; the type's largest finite value for "
                       "no elements or only +inf).",
                       "");
}
OpSchema reduce_max_schema() {
  return reduce_schema("max", Reduction::kMax,
                       "Largest element (NaN is skipped; the type's lowest finite value for no "
                       "elements or only -inf).",
                       "");
}
OpSchema reduce_mean_schema() {
  return reduce_schema("mean", Reduction::kMean,
                       std::string("Mean of the elements (NaN for none).") + kIntegerDoc,
                       "Output and accumulation type: float32 (default) or the input's.");
}
OpSchema reduce_mean_square_schema() {
  return reduce_schema("mean_square", Reduction::kMeanSquare,
                       std::string("Mean of the squared elements (NaN for none).") + kIntegerDoc,
                       "Output and accumulation type: float32 (default) or the input's 64-bit "
                       "integer type.");
}
OpSchema reduce_rms_schema() {
  return reduce_schema(
      "rms", Reduction::kRms,
      std::string("Root mean square of the elements (NaN for none).") + kIntegerDoc,
      "Output and accumulation type: float32 (default) or the input's.");
}
OpSchema reduce_std_dev_schema() {
  return reduce_schema("std_dev", Reduction::kStdDev,
                       "Standard deviation about the given mean (float32, shaped as the output "
                       "or one value): sqrt(sum((x - mean)^2) / (count - ddof)), float32. With "
                       "empty `axes`: zeros.",
                       "");
}
OpSchema reduce_variance_schema() {
  return reduce_schema("variance", Reduction::kVariance,
                       "Variance about the given mean (float32, shaped as the output or one "
                       "value): sum((x - mean)^2) / (count - ddof), float32. With empty `axes`: "
                       "zeros.",
                       "");
}

}  // namespace stoker::ops
