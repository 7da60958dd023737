#include "stoker/ops/tensor/tensor_ops.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "stoker/kernels/geometry/slice_cpu.hpp"
#include "stoker/kernels/tensor/cast_gpu.hpp"
#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"

namespace stoker::ops {
namespace {

std::vector<int64_t> dims_of(const TensorShape& s) { return {s.dims().begin(), s.dims().end()}; }

// Every numeric dtype.
template <typename F>
void visit_numeric(DType d, const std::string& what, F&& f) {
  visit_dtype<DType::kBool, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8,
              DType::kI16, DType::kI32, DType::kI64, DType::kF16, DType::kBF16, DType::kF32,
              DType::kF64>(d, what, std::forward<F>(f));
}

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

class Transpose : public Operator {
 public:
  explicit Transpose(const OpSpec& spec) : Operator(spec) {
    for (auto p : spec.arg<std::vector<int64_t>>("perm")) perm_.push_back(int(p));
    auto sorted = perm_;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k)
      STOKER_ENFORCE(sorted[k] == int(k), ValueError, "transpose: perm ",
                     format_arg_value(spec.arg<std::vector<int64_t>>("perm")),
                     " is not a permutation of 0..", sorted.size() - 1);
  }
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), shapes(in), layout(in));
    const size_t es = dtype_size(in.dtype());
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::transpose_cpu(static_cast<const uint8_t*>(in.sample(i).data), dims_of(in.shape(i)),
                             perm_, es, static_cast<uint8_t*>(out.sample(i).data));
    });
  }

 protected:
  std::vector<TensorShape> shapes(const Batch& in) const {
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == int(perm_.size()), ValueError, "transpose: perm has ",
                     perm_.size(), " axes but sample ", i, " has shape ", in.shape(i).to_string());
      std::vector<int64_t> d;
      for (int p : perm_) d.push_back(in.shape(i)[p]);
      shapes.emplace_back(d);
    }
    return shapes;
  }
  std::string layout(const Batch& in) const {
    std::string layout;
    if (spec_.has_arg("output_layout")) {
      layout = spec_.arg<std::string>("output_layout");
    } else if (spec_.arg<bool>("transpose_layout") && in.layout().str().size() == perm_.size()) {
      for (int p : perm_) layout += in.layout().str()[size_t(p)];
    }
    return layout;
  }

  std::vector<int> perm_;
};

class Reshape final : public Operator {
 public:
  explicit Reshape(const OpSpec& spec) : Operator(spec) {
    STOKER_ENFORCE(
        spec.has_arg("shape") != spec.has_arg("rel_shape") || spec.has_arg("shape") == false,
        ValueError, "reshape: give `shape` or `rel_shape`, not both");
  }
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const bool rel = spec_.has_arg("rel_shape");
    const bool given = rel || spec_.has_arg("shape") || ws.arg_inputs.count("shape");
    STOKER_ENFORCE(given, ValueError, "reshape: give `shape` or `rel_shape`");
    ws.outputs.push_back(Batch::with_samples(n, in.dtype(), layout_for(in), in.memory()));
    Batch& out = ws.outputs.back();
    out.copy_source_info(in);
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      std::vector<int64_t> dims;
      if (rel) {
        // out[k] = in[k] * rel[k] for the first rel.size() axes; one negative entry takes the
        // rest of the volume (DALI: [480, 640, 3] with [0.5, -1] gives [240, 3840]).
        auto r = spec_.arg<std::vector<double>>("rel_shape");
        STOKER_ENFORCE(int(r.size()) <= s.ndim(), ValueError, "reshape: rel_shape has ", r.size(),
                       " values for sample ", i, " of shape ", s.to_string());
        for (size_t k = 0; k < r.size(); ++k)
          dims.push_back(r[k] < 0 ? -1 : std::llround(r[k] * double(s[int(k)])));
      } else {
        for (double v : list_arg(ws, "shape", i)) dims.push_back(int64_t(v));
      }
      STOKER_ENFORCE(dims.size() <= size_t(kMaxNdim), ValueError, "reshape: ", dims.size(),
                     " dimensions asked for; at most ", kMaxNdim, " are supported");
      // One -1 takes what the others leave.
      int64_t known = 1;
      int wild = -1;
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == -1) {
          STOKER_ENFORCE(wild < 0, ValueError, "reshape: more than one -1 in the shape");
          wild = int(k);
        } else {
          STOKER_ENFORCE(dims[k] >= 0, ValueError, "reshape: negative extent ", dims[k]);
          known *= dims[k];
        }
      }
      if (wild >= 0) {
        STOKER_ENFORCE(known > 0 && s.volume() % known == 0, ValueError,
                       "reshape: cannot infer "
                       "-1 for sample ",
                       i, " of shape ", s.to_string());
        dims[size_t(wild)] = s.volume() / known;
      }
      TensorShape shape(dims);
      STOKER_ENFORCE(shape.volume() == s.volume(), ValueError, "reshape: sample ", i, " of shape ",
                     s.to_string(), " (", s.volume(), " elements) cannot become ",
                     shape.to_string(), " (", shape.volume(), ")");
      // No copy: the output views the input's memory.
      out.set_sample(i, in.owner(i), const_cast<void*>(in.sample(i).data), shape);
    }
  }

 private:
  TensorLayout layout_for(const Batch& in) const {
    if (spec_.has_arg("layout")) return spec_.arg<std::string>("layout");
    return {};  // the axes changed: the old names no longer apply
    (void)in;
  }
};

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
      T v = kernels::cast_value<T>(spec_.arg<double>("fill_value"));
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
    // Each padded axis: the batch's largest extent (or `shape`), rounded up to `align`.
    std::vector<int64_t> target(size_t(nd), -1);
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      STOKER_ENFORCE(a >= 0 && a < nd, ValueError, "pad: axis ", a, " of ", nd, "-D samples");
      int64_t t = shape_arg.empty() ? -1 : shape_arg[k];
      if (t < 0)
        for (int i = 0; i < n; ++i) t = std::max(t, in.shape(i)[int(a)]);
      const int64_t al = align.empty() ? 1 : align[align.size() == 1 ? 0 : k];
      STOKER_ENFORCE(al >= 1, ValueError, "pad: align must be >= 1, got ", al);
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
      shapes.emplace_back(d);
    }
    return shapes;
  }
};

// cat (stack = false) joins the inputs along an existing axis; stack along a new one.
class Join : public Operator {
 public:
  Join(const OpSpec& spec, bool stack) : Operator(spec), stack_(stack) {}
  void run(Workspace& ws) override {
    const Batch& first = ws.input(0);
    const int n = first.size();
    const size_t k_inputs = ws.inputs.size();
    const int64_t axis = spec_.arg<int64_t>("axis");
    std::string layout;
    auto shapes = plan(ws, layout);
    Batch& out = add_output(ws, first.dtype(), shapes, layout);
    const size_t es = dtype_size(first.dtype());
    for_each_sample(ws, n, [&](int i, int) {
      // Every input is `outer` blocks; block b of the output is block b of each input in turn.
      const auto& s0 = first.shape(i);
      int64_t outer = 1;
      for (int a = 0; a < int(axis); ++a) outer *= s0[a];
      auto* dst = static_cast<uint8_t*>(out.sample(i).data);
      for (int64_t b = 0; b < outer; ++b) {
        for (size_t k = 0; k < k_inputs; ++k) {
          const Batch& src = ws.input(int(k));
          const size_t block = size_t(src.shape(i).volume() / std::max<int64_t>(outer, 1)) * es;
          if (block == 0) continue;
          std::memcpy(dst, static_cast<const uint8_t*>(src.sample(i).data) + size_t(b) * block,
                      block);
          dst += block;
        }
      }
    });
  }

 protected:
  // Output shapes (and `layout`); validates dtypes, counts and shapes.
  std::vector<TensorShape> plan(const Workspace& ws, std::string& layout) const {
    const auto& name = spec_.schema->name;
    const Batch& first = ws.input(0);
    const int n = first.size();
    const size_t k_inputs = ws.inputs.size();
    for (size_t k = 1; k < k_inputs; ++k) {
      STOKER_ENFORCE(ws.input(int(k)).dtype() == first.dtype(), TypeError, name, ": input ", k,
                     " is ", dtype_name(ws.input(int(k)).dtype()), ", input 0 is ",
                     dtype_name(first.dtype()));
      STOKER_ENFORCE(ws.input(int(k)).size() == n, ValueError, name, ": input ", k, " has ",
                     ws.input(int(k)).size(), " samples, input 0 has ", n);
    }
    const int64_t axis = spec_.arg<int64_t>("axis");
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      const auto& s0 = first.shape(i);
      const int nd = s0.ndim();
      STOKER_ENFORCE(axis >= 0 && axis < (stack_ ? nd + 1 : nd), ValueError, name, ": axis ", axis,
                     " is out of range for samples of shape ", s0.to_string());
      int64_t joined = 0;
      for (size_t k = 0; k < k_inputs; ++k) {
        const auto& s = ws.input(int(k)).shape(i);
        bool same = s.ndim() == nd;  // cat: every extent but the axis's; stack: all of them
        for (int a = 0; same && a < nd; ++a) same = s[a] == s0[a] || (!stack_ && a == axis);
        STOKER_ENFORCE(same, ValueError, name, ": sample ", i, " of input ", k, " has shape ",
                       s.to_string(), ", input 0's has ", s0.to_string(),
                       stack_ ? " (stack needs equal shapes)" : " (only the axis may differ)");
        joined += stack_ ? 1 : s[int(axis)];
      }
      auto d = dims_of(s0);
      if (stack_)
        d.insert(d.begin() + axis, int64_t(k_inputs));
      else
        d[size_t(axis)] = joined;
      shapes.emplace_back(d);
    }
    layout = first.layout().str();
    if (stack_ && !layout.empty())
      layout = spec_.has_arg("axis_name")
                   ? layout.insert(size_t(axis), spec_.arg<std::string>("axis_name"))
                   : std::string();
    return shapes;
  }

  bool stack_;
};

#ifdef STOKER_HAVE_CUDA
// GPU backends of the data-movement operators: one strided-copy launch per batch
// (kernels/tensor/copy_gpu), descriptors planned here.
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

class TransposeGpu final : public Transpose {
 public:
  using Transpose::Transpose;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), shapes(in), layout(in));
    std::vector<kernels::StridedCopyGpu> d;
    for (int i = 0; i < in.size(); ++i) {
      const auto od = dims_of(out.shape(i));
      const auto ist = dense_strides(dims_of(in.shape(i)));
      std::vector<int64_t> in_stride;
      for (int p : perm_) in_stride.push_back(ist[size_t(p)]);
      d.push_back(
          copy_desc(in.data(i), out.data(i), od, dense_strides(od), in_stride, od, "transpose"));
    }
    run_copies(*this, ws, d, dtype_size(in.dtype()));
  }
};

class PadGpu final : public Pad {
 public:
  using Pad::Pad;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto shapes = plan(in);
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    std::vector<kernels::StridedCopyGpu> d;
    for (int i = 0; i < in.size(); ++i) {
      const auto od = dims_of(out.shape(i)), id = dims_of(in.shape(i));
      d.push_back(copy_desc(in.data(i), out.data(i), od, dense_strides(od), dense_strides(id), id,
                            "pad", {}, fill_bytes(in.dtype())));
    }
    run_copies(*this, ws, d, dtype_size(in.dtype()));
  }
};

class JoinGpu final : public Join {
 public:
  using Join::Join;
  void run(Workspace& ws) override {
    const Batch& first = ws.input(0);
    std::string layout;
    auto shapes = plan(ws, layout);
    Batch& out = add_output(ws, first.dtype(), shapes, layout);
    const int64_t axis = spec_.arg<int64_t>("axis");
    const size_t es = dtype_size(first.dtype());
    std::vector<kernels::StridedCopyGpu> d;
    for (int i = 0; i < first.size(); ++i) {
      const auto od = dims_of(out.shape(i));
      const auto ost = dense_strides(od);
      int64_t offset = 0;  // along the axis
      for (size_t k = 0; k < ws.inputs.size(); ++k) {
        const Batch& src = ws.input(int(k));
        auto id = dims_of(src.shape(i));
        auto ist = dense_strides(id);
        if (stack_) {  // the new axis has extent 1 in each input
          id.insert(id.begin() + axis, 1);
          ist.insert(ist.begin() + axis, 0);
        }
        auto* dst = static_cast<uint8_t*>(out.data(i)) + size_t(offset * ost[size_t(axis)]) * es;
        d.push_back(copy_desc(src.data(i), dst, id, ost, ist, id, spec_.schema->name));
        offset += id[size_t(axis)];
      }
    }
    run_copies(*this, ws, d, es);
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

OpSchema transpose_schema() {
  ArgSchema out_layout{"output_layout", ArgType::kString, "The output's layout.", std::nullopt};
  out_layout.optional = true;
  return {
      .name = "transpose",
      .doc =
          "Permutes the axes: output axis k is input axis perm[k]. The layout is permuted "
          "too (transpose_layout) unless output_layout is given.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"perm", ArgType::kIntList, "The permutation."},
               {"transpose_layout", ArgType::kBool, "Permute the layout's letters.", true},
               out_layout},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Transpose>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<TransposeGpu>(s); },
#endif
      .example = OpExample{.args = {{"perm", std::vector<int64_t>{2, 0, 1}}}},
  };
}

OpSchema reshape_schema() {
  ArgSchema shape{"shape",
                  ArgType::kIntList,
                  "The new shape (one -1 is inferred); a per-sample tensor allowed.",
                  std::nullopt,
                  true,
                  true};
  ArgSchema rel{"rel_shape",
                ArgType::kFloatList,
                "The new shape as multiples of the input's first extents (out[k] = in[k] * "
                "rel[k]); one negative value takes what the volume leaves, as in DALI.",
                std::nullopt,
                false,
                true};
  ArgSchema layout{
      "layout", ArgType::kString, "The output's layout (default: none).", std::nullopt, false,
      true};
  return {
      .name = "reshape",
      .doc =
          "Gives each sample a new shape with the same number of elements, without copying "
          "(the output views the input's memory).",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {shape, rel, layout},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      // No data moves: the same operator views device memory as well.
      .make_gpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      .example = OpExample{.args = {{"shape", std::vector<int64_t>{-1}}}},
  };
}

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

OpSchema cat_schema() {
  return {
      .name = "cat",
      .doc = "Joins the inputs' samples along `axis`; their other extents must agree.",
      .inputs = {"input"},
      .variadic_inputs = true,
      .outputs = {"output"},
      .args = {{"axis", ArgType::kInt, "The axis to join along.", int64_t{0}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Join>(s, false); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<JoinGpu>(s, false); },
#endif
      .example = OpExample{},
  };
}

OpSchema stack_schema() {
  ArgSchema axis_name{
      "axis_name", ArgType::kString, "Layout letter of the new axis.", std::nullopt, false, true};
  return {
      .name = "stack",
      .doc = "Stacks the inputs' samples (equal shapes) along a new axis at `axis`.",
      .inputs = {"input"},
      .variadic_inputs = true,
      .outputs = {"output"},
      .args = {{"axis", ArgType::kInt, "Position of the new axis.", int64_t{0}}, axis_name},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Join>(s, true); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<JoinGpu>(s, true); },
#endif
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
