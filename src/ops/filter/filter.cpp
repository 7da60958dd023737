#include "stoker/ops/filter/filter.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/kernels/filter/filter.hpp"
#include "stoker/kernels/filter/filter_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

kernels::Border parse_border(const std::string& given) {
  const std::string b = lower(given);
  if (b == "reflect_101") return kernels::Border::kReflect101;
  if (b == "reflect_1001" || b == "reflect") return kernels::Border::kReflect1001;
  if (b == "wrap") return kernels::Border::kWrap;
  if (b == "clamp") return kernels::Border::kClamp;
  STOKER_ENFORCE(b == "constant", ValueError,
                 "filter: border must be reflect_101, reflect_1001, wrap, clamp or constant, got '",
                 given, "'");
  return kernels::Border::kConstant;
}

bool parse_valid(const std::string& given) {
  const std::string m = lower(given);
  STOKER_ENFORCE(m == "same" || m == "valid", ValueError,
                 "filter: mode must be 'same' or 'valid', got '", given, "'");
  return m == "valid";
}

// What the layout says about a sample (frames are unfolded before: ops/sequence_operator.hpp):
// leading channel planes, then the spatial axes, then interleaved channels.
struct Layout {
  int planes_dims = 0;  // leading C: each channel a plane
  int axes = 2;
  bool channels = false;
};

Layout parse_layout(const Batch& in) {
  const std::string l = in.layout().str();
  Layout out;
  if (l.empty()) {
    // No layout: every axis is spatial (DALI's reading: an unnamed HxWx3 is a volume).
    const int ndim = in.size() ? in.shape(0).ndim() : 2;
    STOKER_ENFORCE(ndim == 2 || ndim == 3, ValueError, "filter: samples without a layout must be ",
                   "2-D or 3-D (every axis spatial), got ", ndim,
                   " dimensions; give a layout naming the channels or frames (HWC, CHW, FHWC)");
    out.axes = ndim;
    return out;
  }
  STOKER_ENFORCE(l.find('F') == std::string::npos, ValueError,
                 "filter: frames (F) must be the outermost dimension, got layout '", l, "'");
  size_t k = 0;
  while (k < l.size() && l[k] == 'C') ++k;
  out.planes_dims = int(k);
  while (k < l.size() && l[k] != 'C') ++k;
  out.axes = int(k) - out.planes_dims;
  out.channels = k < l.size();
  STOKER_ENFORCE(out.planes_dims <= 1 && (k == l.size() || k + 1 == l.size()), ValueError,
                 "filter: unsupported layout '", l,
                 "'; expected spatial axes with channels first or last (HW, HWC, CHW, DHWC, ...)");
  STOKER_ENFORCE(out.axes == 2 || out.axes == 3, ValueError, "filter: layout '", l, "' has ",
                 out.axes, " spatial axes; 2-D and 3-D filtering are supported");
  return out;
}

class Filter : public Operator {
 public:
  explicit Filter(const OpSpec& spec)
      : Operator(spec),
        border_(parse_border(spec.arg<std::string>("border"))),
        valid_(parse_valid(spec.arg<std::string>("mode"))) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Plan plan = make_plan(ws);
    Batch& out = add_output(ws, plan.out_dtype, plan.out_shapes, in.layout());
    {
      std::lock_guard lock(mutex_);
      if (int(scratch_.size()) < ws.pool->num_threads())
        scratch_.resize(size_t(ws.pool->num_threads()));
    }
    const Batch& filters = ws.input(1);
    const Batch* fills = ws.inputs.size() > 2 ? &ws.input(2) : nullptr;
    for_each_sample(ws, in.size(), [&](int i, int thread) {
      visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kF16, DType::kF32>(
          in.dtype(), "filter input", [&](auto it) {
            using In = typename decltype(it)::type;
            const float fill = fills && border_ == kernels::Border::kConstant
                                   ? to_float(*fills->data_as<const In>(i))
                                   : 0.f;
            auto go = [&](auto* dst) {
              kernels::filter_cpu(in.data_as<const In>(i), dst, filters.data_as<const float>(i),
                                  plan.shapes[size_t(i)], fill, scratch_[size_t(thread)]);
            };
            if (plan.out_dtype == in.dtype())
              go(out.data_as<In>(i));
            else
              go(out.data_as<float>(i));
          });
    });
  }

 protected:
  struct Plan {
    DType out_dtype;
    std::vector<TensorShape> out_shapes;
    std::vector<kernels::FilterShape> shapes;
  };

  // Checks the inputs and arguments and describes every sample to the kernels.
  Plan make_plan(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    const Batch& filters = ws.input(1);
    const int n = in.size();
    Plan plan;
    plan.out_dtype = out_dtype(in.dtype());
    STOKER_ENFORCE(filters.dtype() == DType::kF32, TypeError,
                   "filter: the filters must be float32, got ", dtype_name(filters.dtype()));
    STOKER_ENFORCE(filters.size() == n, ValueError, "filter: got ", filters.size(), " filters for ",
                   n, " samples");
    const Batch* fills = ws.inputs.size() > 2 ? &ws.input(2) : nullptr;
    if (fills) {
      STOKER_ENFORCE(fills->dtype() == in.dtype(), TypeError,
                     "filter: fill_value must have the input's type (", dtype_name(in.dtype()),
                     "), got ", dtype_name(fills->dtype()));
      STOKER_ENFORCE(fills->size() == n, ValueError, "filter: got ", fills->size(),
                     " fill values for ", n, " samples");
    }
    const Layout layout = parse_layout(in);
    for (int i = 0; i < n; ++i) {
      const TensorShape& s = in.shape(i);
      const TensorShape& f = filters.shape(i);
      const int ndim = layout.planes_dims + layout.axes + int(layout.channels);
      STOKER_ENFORCE(s.ndim() == ndim, ValueError, "filter: sample ", i, " has shape ",
                     s.to_string(), ", which layout '", in.layout().str(), "' does not describe");
      STOKER_ENFORCE(f.ndim() == layout.axes, ValueError, "filter: the filter of sample ", i,
                     " must have ", layout.axes,
                     " dimensions, as the sample has spatial axes; got ", "shape ", f.to_string());
      STOKER_ENFORCE(f.volume() > 0, ValueError, "filter: the filter of sample ", i,
                     " is empty (shape ", f.to_string(), ")");
      if (fills)
        STOKER_ENFORCE(fills->shape(i).volume() == 1, ValueError, "filter: fill_value of sample ",
                       i, " must be a scalar, got shape ", fills->shape(i).to_string());
      kernels::FilterShape k;
      k.planes = layout.planes_dims ? s[0] : 1;
      k.channels = layout.channels ? s[s.ndim() - 1] : 1;
      const int first = 3 - layout.axes;  // 2-D: depth 1
      auto anchor = list_arg(ws, "anchor", i);
      STOKER_ENFORCE(anchor.size() == 1 || int(anchor.size()) == layout.axes, ValueError,
                     "filter: anchor needs 1 or ", layout.axes, " values, got ", anchor.size());
      TensorShape out_shape = s;
      for (int a = 0; a < layout.axes; ++a) {
        const int64_t extent = s[layout.planes_dims + a], taps = f[a];
        const auto at = int64_t(anchor.size() == 1 ? anchor[0] : anchor[size_t(a)]);
        STOKER_ENFORCE(at >= -1 && at < taps, ValueError, "filter: the anchor of sample ", i,
                       " must lie within its filter of shape ", f.to_string(),
                       " (or be -1: the centre), got ", format_list(anchor));
        k.in[first + a] = extent, k.k[first + a] = taps;
        if (valid_) {
          STOKER_ENFORCE(extent >= taps, ValueError, "filter: the filter of sample ", i, " (shape ",
                         f.to_string(), ") is larger than the sample (shape ", s.to_string(),
                         "), which mode='valid' does not allow");
          k.out[first + a] = extent - taps + 1;
          k.anchor[first + a] = 0;
        } else {
          k.out[first + a] = extent;
          k.anchor[first + a] = at < 0 ? taps / 2 : at;
        }
        out_shape[layout.planes_dims + a] = k.out[first + a];
      }
      k.border = border_;
      k.fused = kernels::fused_prefix(in.dtype(), plan.out_dtype, k.out[2] * k.channels);
      plan.shapes.push_back(k);
      plan.out_shapes.push_back(out_shape);
    }
    return plan;
  }

  DType out_dtype(DType in) const {
    STOKER_ENFORCE(in == DType::kU8 || in == DType::kI8 || in == DType::kU16 || in == DType::kI16 ||
                       in == DType::kF16 || in == DType::kF32,
                   TypeError, "filter: unsupported input type ", dtype_name(in),
                   "; expected uint8, int8, uint16, int16, float16 or float32");
    if (!spec_.has_arg("dtype")) return in;
    const DType d = dtype_from_name(spec_.arg<std::string>("dtype"));
    STOKER_ENFORCE(d == in || d == DType::kF32, TypeError, "filter: dtype must be the input's (",
                   dtype_name(in), ") or float32, got ", dtype_name(d));
    return d;
  }

  static std::string format_list(const std::vector<double>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(int64_t(v[k]));
    return s + "]";
  }

  kernels::Border border_;
  bool valid_;
  std::mutex mutex_;
  std::vector<std::vector<float>> scratch_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the same plan; data, filters and fill values are read where they lie on the
// device, so one descriptor array goes up and one launch runs.
class FilterGpu final : public Filter {
 public:
  using Filter::Filter;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Plan plan = make_plan(ws);
    Batch& out = add_output(ws, plan.out_dtype, plan.out_shapes, in.layout());
    const int n = in.size();
    if (n == 0) return;
    const Batch& filters = ws.input(1);
    const Batch* fills = ws.inputs.size() > 2 ? &ws.input(2) : nullptr;
    std::vector<kernels::FilterGpuSample> desc(static_cast<size_t>(n));
    int64_t max_row = 0, max_rows = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i);
      d.taps = filters.data_as<const float>(i);
      d.fill = fills && border_ == kernels::Border::kConstant ? fills->data(i) : nullptr;
      d.shape = plan.shapes[size_t(i)];
      const auto& k = d.shape;
      bool empty = k.channels == 0;
      for (int a = 0; a < 3; ++a) empty = empty || k.in[a] == 0 || k.out[a] == 0;
      if (empty) d.shape.planes = 0;  // nothing to compute (or to reflect into)
      max_row = std::max(max_row, k.out[2] * k.channels);
      max_rows = std::max(max_rows, d.shape.planes * k.out[0] * k.out[1]);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::filter_gpu(static_cast<const kernels::FilterGpuSample*>(device->data()), n,
                                   max_row, max_rows, in.dtype(), plan.out_dtype, ws.stream),
               "filter (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema filter_schema() {
  ArgSchema dtype{"dtype",
                  ArgType::kDType,
                  "Output type: the input's (default) or float32. Integer outputs are rounded half "
                  "to even and saturated.",
                  std::nullopt,
                  false,
                  true};
  return {
      .name = "filter",
      .doc =
          "Correlates each sample with its filter (DALI's fn.filter, which, as it says, does not "
          "flip the filter): out[y][x] = sum of k[i][j] * in[y + i - ay][x + j - ax] over the "
          "filter, per channel, in float32 (the taps in row-major order, as DALI's CPU operator "
          "through OpenCV's filter2D), rounded half to even and saturated for integer outputs. "
          "Samples: HW, HWC, CHW images, DHW, DHWC, CDHW volumes (3-D filters) and sequences "
          "(FHWC, FCHW; filters and fill values may be per frame). Inputs: the data; the "
          "filters (float32, as many dimensions as the sample has spatial axes); optionally a "
          "scalar per sample of the data's type for border='constant' (default 0).",
      .inputs = {"data", "filter", "fill_value"},
      .optional_inputs = 1,
      .outputs = {"output"},
      .args = {{"anchor", ArgType::kIntList,
                "The filter's tap over the output point, per spatial axis (one value: all "
                "axes); -1: the centre (extent // 2). Ignored in mode='valid'.",
                std::vector<int64_t>{-1}, true},
               {"border", ArgType::kString,
                "Taps outside the sample: reflect_101 (dcb|abcd|cba), reflect_1001 (cba|abcd|dcb; "
                "also 'reflect'), wrap (bcd|abcd|abc), clamp (aaa|abcd|ddd) or constant (the "
                "fill_value input, default 0).",
                std::string("reflect_101")},
               {"mode", ArgType::kString,
                "'same': the output has the input's size; 'valid': only the positions where the "
                "whole filter lies within the sample (each extent shrinks by the filter's - 1).",
                std::string("same")},
               dtype},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Filter>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<FilterGpu>(s); },
#endif
      .sequences = true,
      .example =
          OpExample{
              .args = {}, .dtype = "uint8", .layout = "HWC", .input_dtypes = {{1, "float32"}}},
      .deprecated_names = {"experimental.filter"},
  };
}

}  // namespace stoker::ops
