#include "stoker/ops/geometry/slice.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/slice_dtype.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#endif

namespace stoker::ops {
namespace {

using kernels::Border;

enum class Policy { kError, kTrim, kBorder };

// One sample's window: per axis of the input, its start and extent.
struct Window {
  std::vector<int64_t> start, shape;
};

const char* const kNamedArgs[] = {"start", "rel_start", "end", "rel_end", "shape", "rel_shape"};

class Slice : public Operator {
 public:
  explicit Slice(const OpSpec& spec) : Operator(spec) {
    const auto policy = spec.arg<std::string>("out_of_bounds_policy");
    if (policy == "error") {
      policy_ = Policy::kError;
    } else if (policy == "trim_to_shape") {
      policy_ = Policy::kTrim;
    } else {
      policy_ = Policy::kBorder;
      border_ = policy == "pad" || policy == "constant"     ? Border::kFill
                : policy == "edge" || policy == "clamp"     ? Border::kClamp
                : policy == "reflect" || policy == "reflect_1001" ? Border::kReflect1001
                : policy == "reflect_101"                   ? Border::kReflect101
                : policy == "wrap"                          ? Border::kWrap
                                                            : throw ValueError(detail::concat(
                                                                  "slice: out_of_bounds_policy '",
                                                                  policy,
                                                                  "' is not one of error, "
                                                                  "trim_to_shape, pad, constant, "
                                                                  "edge, clamp, reflect, "
                                                                  "reflect_1001, reflect_101, "
                                                                  "wrap"));
    }
    fill_ = spec.arg<std::vector<double>>("fill_values");
    STOKER_ENFORCE(!fill_.empty(), ValueError, "slice: fill_values needs at least one value");
    dtype_ = slice_dtype_arg(spec);
    for (const char* a : kNamedArgs) named_ = named_ || spec_.given(a);
    STOKER_ENFORCE(!(spec_.given("start") && spec_.given("rel_start")), ValueError,
                   "slice: give `start` or `rel_start`, not both");
    int ends = 0;
    for (const char* a : {"end", "rel_end", "shape", "rel_shape"}) ends += spec_.given(a) ? 1 : 0;
    STOKER_ENFORCE(ends <= 1, ValueError,
                   "slice: give one of `end`, `rel_end`, `shape` and `rel_shape`");
  }

  void run(Workspace& ws) override {
    run_converted(*this, ws, dtype_, [&] { cut(ws); });
  }

 protected:
  // The cut, of the input converted to `dtype` when it asks for another type.
  virtual void cut(Workspace& ws) {
    const Batch& in = ws.input(0);
    const auto windows = plan(ws, in);
    Batch& out = add_output(ws, in.dtype(), out_shapes(windows), in.layout());
    const size_t es = dtype_size(in.dtype());
    for_each_sample(ws, in.size(), [&](int i, int) {
      for (const auto& c : copies(in, out, i, windows[size_t(i)])) kernels::strided_copy_cpu(c, es);
    });
  }

 protected:
  static std::vector<TensorShape> out_shapes(const std::vector<Window>& windows) {
    std::vector<TensorShape> shapes;
    for (const auto& w : windows) shapes.emplace_back(w.shape);
    return shapes;
  }

  // The axes the window's values refer to: `axis_names` in the layout when given (or when
  // neither is given and the layout has them: "WH"), else `axes` (negative: from the back).
  std::vector<int> window_axes(const Batch& in, int i, int ndim) const {
    std::vector<int> axes;
    const auto names = spec_.arg<std::string>("axis_names");
    const bool by_name = spec_.has_arg("axis_names") ||
                         (!spec_.has_arg("axes") && in.layout().find('W') >= 0 &&
                          in.layout().find('H') >= 0);
    if (by_name) {
      for (char c : names) {
        const int a = in.layout().find(c);
        STOKER_ENFORCE(a >= 0, ValueError, "slice: axis_names '", names, "': the input's layout '",
                       in.layout().str(), "' has no '", c, "'");
        axes.push_back(a);
      }
      return axes;
    }
    for (int64_t a : spec_.arg<std::vector<int64_t>>("axes")) {
      STOKER_ENFORCE(a >= -ndim && a < ndim, ValueError, "slice: axis ", a, " of sample ", i,
                     ", which has ", ndim, " dimensions");
      axes.push_back(int(a < 0 ? a + ndim : a));
    }
    return axes;
  }

  // [start, end) along one axis of `extent` from the anchor and shape inputs (DALI's rounding:
  // each end rounded to the nearest; normalized anchor and shape are added before scaling).
  std::pair<int64_t, int64_t> from_inputs(double anchor, double shape, bool float_inputs,
                                          int64_t extent) const {
    const bool norm_a = float_inputs && spec_.arg<bool>("normalized_anchor");
    const bool norm_s = float_inputs && spec_.arg<bool>("normalized_shape");
    const double e = double(extent);
    const double end = norm_a && norm_s ? (anchor + shape) * e
                                        : (norm_a ? anchor * e : anchor) + (norm_s ? shape * e : shape);
    return {std::llround(norm_a ? anchor * e : anchor), std::llround(end)};
  }

  // The same from the named arguments' k-th values.
  std::pair<int64_t, int64_t> from_args(const Workspace& ws, int i, size_t k, int64_t extent) const {
    const double e = double(extent);
    auto value = [&](const char* name) -> std::optional<double> {
      if (!spec_.given(name)) return std::nullopt;
      const auto v = list_arg(ws, name, i);
      STOKER_ENFORCE(k < v.size(), ValueError, "slice: `", name, "` has ", v.size(),
                     " values, the window has more axes");
      return v[k];
    };
    const auto rel_start = value("rel_start");
    const double start = rel_start ? *rel_start * e : value("start").value_or(0.0);
    double end = e;
    if (auto v = value("end")) end = *v;
    if (auto v = value("rel_end")) end = *v * e;
    if (auto v = value("shape")) end = start + *v;
    if (auto v = value("rel_shape")) end = rel_start ? (*rel_start + *v) * e : start + *v * e;
    return {std::llround(start), std::llround(end)};
  }

  std::vector<Window> plan(const Workspace& ws, const Batch& in) const {
    const bool inputs = ws.inputs.size() > 1;
    STOKER_ENFORCE(ws.inputs.size() != 2, ValueError,
                   "slice: give both the anchor and the shape inputs, or neither");
    STOKER_ENFORCE(!(inputs && named_), ValueError,
                   "slice: the anchor and shape inputs cannot be combined with start, end, "
                   "shape or their rel_ forms");
    STOKER_ENFORCE(inputs || named_, ValueError,
                   "slice: give the window, as anchor and shape inputs or as start/end/shape "
                   "arguments (absolute or rel_)");
    std::vector<Window> out(size_t(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      const auto& s = in.shape(i);
      const int nd = s.ndim();
      const auto axes = window_axes(in, i, nd);
      Window& w = out[size_t(i)];
      w.start.assign(size_t(nd), 0);
      w.shape = dims_of(s);
      std::vector<double> anchor, shape;
      if (inputs) {
        anchor = sample_as_doubles(ws.input(1), i);
        shape = sample_as_doubles(ws.input(2), i);
        STOKER_ENFORCE(anchor.size() == axes.size() && shape.size() == axes.size(), ValueError,
                       "slice: sample ", i, ": anchor and shape need ", axes.size(),
                       " values (one per axis sliced), got ", anchor.size(), " and ",
                       shape.size());
      }
      const bool float_inputs = inputs && is_float(ws.input(1).dtype());
      for (size_t k = 0; k < axes.size(); ++k) {
        const int a = axes[k];
        const int64_t extent = s[a];
        auto [lo, hi] = inputs ? from_inputs(anchor[k], shape[k], float_inputs, extent)
                               : from_args(ws, i, k, extent);
        STOKER_ENFORCE(hi >= lo, ValueError, "slice: sample ", i, ": the window [", lo, ", ", hi,
                       ") of axis ", a, " has a negative extent");
        if (policy_ == Policy::kTrim) {
          lo = std::clamp<int64_t>(lo, 0, extent);
          hi = std::clamp<int64_t>(hi, lo, extent);
        }
        STOKER_ENFORCE(policy_ != Policy::kError || (lo >= 0 && hi <= extent), ValueError,
                       "slice: sample ", i, ": the window [", lo, ", ", hi, ") of axis ", a,
                       " leaves the input's extent ", extent,
                       " (out_of_bounds_policy='pad' fills, 'trim_to_shape' cuts it)");
        w.start[size_t(a)] = lo;
        w.shape[size_t(a)] = hi - lo;
      }
      // Padded, the window is the output's size (arg_limits.hpp).
      check_arg_elements("slice", inputs ? "the anchor and shape inputs" : "the window arguments",
                         w.shape, i, double(s.volume()));
    }
    return out;
  }

  // The copies that fill sample i's window: one, or one per output channel when fill_values
  // gives each channel its value.
  std::vector<kernels::StridedCopy> copies(const Batch& in, Batch& out, int i,
                                           const Window& w) const {
    const auto in_dims = dims_of(in.shape(i));
    const int nd = int(in_dims.size());
    STOKER_ENFORCE(nd <= kernels::kCopyMaxDims, ValueError, "slice: at most ",
                   kernels::kCopyMaxDims, " dimensions, sample ", i, " has ", nd);
    kernels::StridedCopy c;
    c.in = in.data(i), c.out = out.data(i), c.ndim = nd, c.count = 1;
    int64_t in_stride = 1, out_stride = 1;
    for (int k = nd - 1; k >= 0; --k) {
      c.shape[k] = w.shape[size_t(k)], c.in_start[k] = w.start[size_t(k)];
      c.in_shape[k] = in_dims[size_t(k)], c.border[k] = border_;
      c.in_stride[k] = in_stride, c.out_stride[k] = out_stride;
      in_stride *= in_dims[size_t(k)], out_stride *= w.shape[size_t(k)];
      c.count *= w.shape[size_t(k)];
    }
    if (c.count == 0) return {};
    if (fill_.size() == 1) {
      c.fill = fill_bits(in.dtype(), fill_[0]);
      return {c};
    }
    const int ch = in.layout().find('C');
    STOKER_ENFORCE(ch >= 0 && w.shape[size_t(ch)] == int64_t(fill_.size()), ValueError,
                   "slice: ", fill_.size(), " fill_values need as many channels ('C' in the "
                   "layout); sample ", i, " has layout '", in.layout().str(), "' and ",
                   ch >= 0 ? w.shape[size_t(ch)] : 0, " channels in the window");
    std::vector<kernels::StridedCopy> per_channel;
    for (size_t k = 0; k < fill_.size(); ++k) {
      kernels::StridedCopy one = c;
      one.count = c.count / c.shape[ch];
      one.shape[ch] = 1;
      one.in_start[ch] = c.in_start[ch] + int64_t(k);
      one.out = static_cast<uint8_t*>(c.out) +
                size_t(int64_t(k) * c.out_stride[ch]) * dtype_size(in.dtype());
      one.fill = fill_bits(in.dtype(), fill_[k]);
      per_channel.push_back(one);
    }
    return per_channel;
  }

  // `v` in the data's type, as the descriptor's fill bytes.
  static uint64_t fill_bits(DType d, double v) {
    uint64_t bits = 0;
    visit_numeric(d, "slice", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T x = fill_cast<T>(v);
      std::memcpy(&bits, &x, sizeof(T));
    });
    return bits;
  }

  std::optional<DType> dtype_;
  Policy policy_ = Policy::kError;
  Border border_ = Border::kFill;
  std::vector<double> fill_;
  bool named_ = false;
};

#ifdef STOKER_HAVE_CUDA
class SliceGpu final : public Slice {
 public:
  using Slice::Slice;
  void cut(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const auto windows = plan(ws, in);
    Batch& out = add_output(ws, in.dtype(), out_shapes(windows), in.layout());
    std::vector<kernels::StridedCopy> all;
    for (int i = 0; i < in.size(); ++i) {
      for (const auto& c : copies(in, out, i, windows[size_t(i)])) all.push_back(c);
    }
    run_copies(*this, ws, all, dtype_size(in.dtype()));
  }
};
#endif

}  // namespace

OpSchema slice_schema() {
  return {
      .name = "slice",
      .doc =
          "Extracts a window of any number of axes (as DALI's slice). The window comes from the "
          "`anchor` and `shape` inputs (one value per sliced axis; float values are fractions "
          "of the extents unless normalized_anchor/normalized_shape are off, integers are "
          "pixels) or from the arguments start/rel_start with end/rel_end or shape/rel_shape "
          "(per sample too). The sliced axes are `axis_names` in the layout (by default \"WH\" "
          "where the layout has them) or `axes` (default [1, 0]). Start and end are each "
          "rounded to the nearest integer. out_of_bounds_policy: 'error' (default), "
          "'trim_to_shape' (the window cut to the input), 'pad'/'constant' (fill_values: one, "
          "or one per channel of the window), 'edge'/'clamp', 'reflect'/'reflect_1001' (the "
          "edge repeated), 'reflect_101', 'wrap'.",
      .inputs = {"input", "anchor", "window_shape"},
      .optional_inputs = 2,
      .host_inputs = 2,
      .outputs = {"output"},
      .args = {{"axes", ArgType::kIntList, "Axes of the window's values (negative: from the back).",
                std::vector<int64_t>{1, 0}},
               {"axis_names", ArgType::kString,
                "Axes of the window's values by layout name; wins over `axes` when given.",
                std::string("WH")},
               {"normalized_anchor", ArgType::kBool, "A float anchor input is fractions.", true},
               {"normalized_shape", ArgType::kBool, "A float shape input is fractions.", true},
               optional_arg("start", ArgType::kIntList, "Window start, per sliced axis."),
               optional_arg("rel_start", ArgType::kFloatList, "Window start as fractions."),
               optional_arg("end", ArgType::kIntList, "Window end (exclusive)."),
               optional_arg("rel_end", ArgType::kFloatList, "Window end as fractions."),
               optional_arg("shape", ArgType::kIntList, "Window extent."),
               optional_arg("rel_shape", ArgType::kFloatList, "Window extent as fractions."),
               {"out_of_bounds_policy", ArgType::kString, "What a window leaving the input reads.",
                std::string("error")},
               {"fill_values", ArgType::kFloatList, "Padding value(s) for 'pad'.",
                std::vector<double>{0.0}},
               optional_arg("dtype", ArgType::kDType,
                            "The output's type: float32, float16, uint8 or the input's (the "
                            "default); into uint8 toward zero and saturated, as DALI's.",
                            false)},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Slice>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<SliceGpu>(s); },
#endif
      .example = OpExample{.args = {{"rel_start", std::vector<double>{0.25}},
                                    {"rel_shape", std::vector<double>{0.5}},
                                    {"axes", std::vector<int64_t>{0}}},
                           .dtype = "uint8",
                           .layout = ""},
  };
}

}  // namespace stoker::ops
