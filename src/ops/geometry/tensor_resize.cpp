// tensor_resize: DALI's TensorResize. Any axes of a tensor are resized (sizes or scales, with
// DALI's modes, regions of interest and rounding: tensor_resize_plan); the resampled axes are
// at most 3 adjacent ones, the axes before them frames and those after them channels
// (tensor_resample).
#include "stoker/ops/geometry/tensor_resize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/geometry/tensor_resample.hpp"
#include "stoker/ops/geometry/tensor_resize_plan.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class TensorResize : public Operator {
 public:
  explicit TensorResize(const OpSpec& spec) : Operator(spec), resampler_(spec) {
    STOKER_ENFORCE(spec.given("sizes") != spec.given("scales"), ValueError,
                   "tensor_resize: give one of sizes and scales");
    STOKER_ENFORCE(spec.given("roi_start") == spec.given("roi_end"), ValueError,
                   "tensor_resize: roi_start and roi_end must be given together");
    STOKER_ENFORCE(!spec.has_arg("axes") || !spec.has_arg("axis_names"), ValueError,
                   "tensor_resize: axes and axis_names cannot be given together");
    mode_ = parse_resize_mode("tensor_resize", spec.arg<std::string>("mode"));
    STOKER_ENFORCE(!spec.given("scales") ||
                       (mode_ != ResizeMode::kNotLarger && mode_ != ResizeMode::kNotSmaller),
                   ValueError, "tensor_resize: scales cannot be given with mode '",
                   spec.arg<std::string>("mode"), "'");
    rounding_ = parse_size_rounding("tensor_resize", spec.arg<std::string>("size_rounding"));
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto plan = make_plan(ws, in);
    Batch& out = add_planned_output(ws, in, plan);
    resampler_.ensure(ws.pool->num_threads());
    for_each_sample(ws, in.size(),
                    [&](int i, int thread) { resampler_.run_sample(plan, in, out, i, thread); });
  }

 protected:
  TensorPlan make_plan(Workspace& ws, const Batch& in) const {
    const int n = in.size();
    TensorPlan p;
    if (n == 0) return p;
    resampled_dtype(spec_, in.dtype());  // checked before anything is planned
    const int ndim = in.sample_ndim();
    STOKER_ENFORCE(ndim >= 1, ValueError, "tensor_resize: the input must have at least 1 axis");
    p.added = std::max(0, 2 - ndim);
    const int edim = ndim + p.added;
    auto axes = resized_axes(in, ndim);
    for (int& a : axes) a += p.added;
    p.in_shapes.resize(size_t(n));
    p.axes.resize(size_t(n));
    for_each_sample(ws, n, [&](int i, int) {
      auto& shape = p.in_shapes[size_t(i)];
      shape.assign(size_t(p.added), 1);
      for (int64_t e : in.shape(i).dims()) shape.push_back(e);
      p.axes[size_t(i)] = sample_axes(ws, i, shape, axes, edim);
    });
    p.block = resize_block(p.in_shapes, p.axes, edim);
    if (p.block.count > 3)
      throw ValueError(detail::concat(
          "tensor_resize: at most 3 adjacent axes can be resized; the resized axes span ",
          p.block.count, " axes from axis ", p.block.first - p.added,
          " (the axes between resized ones are resampled too; those before and after are "
          "not)"));
    return p;
  }

  // The output: the shapes `plan` gives, the dtype the arguments ask for.
  Batch& add_planned_output(Workspace& ws, const Batch& in, const TensorPlan& plan) {
    return add_output(ws, resize_output_dtype(spec_, in.dtype()), planned_shapes(plan),
                      in.layout());
  }

  TensorResampler resampler_;

 private:
  // The axes sizes, scales, max_size, alignment and the region refer to, in the input's
  // numbering: axis_names in its layout, or axes (negative: from the back), or all of them.
  std::vector<int> resized_axes(const Batch& in, int ndim) const {
    std::vector<int> axes;
    if (spec_.has_arg("axis_names")) {
      const auto names = spec_.arg<std::string>("axis_names");
      const std::string layout = in.layout().str();
      for (char c : names) {
        const auto at = layout.find(c);
        STOKER_ENFORCE(at != std::string::npos, ValueError, "tensor_resize: axis '", c,
                       "' of axis_names '", names, "' is not in the input's layout '", layout, "'");
        axes.push_back(int(at));
      }
    } else if (spec_.has_arg("axes")) {
      for (int64_t a : spec_.arg<std::vector<int64_t>>("axes")) {
        STOKER_ENFORCE(a >= -ndim && a < ndim, ValueError, "tensor_resize: axis ", a,
                       " is out of range for ", ndim, "-D input (axes go from ", -ndim, " to ",
                       ndim - 1, ")");
        axes.push_back(int(a < 0 ? a + ndim : a));
      }
    } else {
      for (int d = 0; d < ndim; ++d) axes.push_back(d);
    }
    STOKER_ENFORCE(std::set<int>(axes.begin(), axes.end()).size() == axes.size(), ValueError,
                   "tensor_resize: an axis is named twice in axes/axis_names");
    return axes;
  }

  // A per-axis argument of sample i: one value (for every axis) or one per axis; none: empty.
  std::vector<double> per_axis(const Workspace& ws, const char* name, int i, size_t count) const {
    if (!spec_.given(name)) return {};
    auto v = list_arg(ws, name, i);
    if (v.size() == 1 && count > 1) v.assign(count, v[0]);
    STOKER_ENFORCE(v.size() == count, ValueError, "tensor_resize: ", name,
                   " needs one value or one per resized axis (", count, "), got ", v.size(),
                   " (sample ", i, ")");
    return v;
  }

  std::vector<AxisResize> sample_axes(const Workspace& ws, int i, const std::vector<int64_t>& shape,
                                      const std::vector<int>& axes, int edim) const {
    const size_t k = axes.size();
    std::vector<AxisRequest> req(static_cast<size_t>(edim));
    const auto sizes = per_axis(ws, "sizes", i, k), scales = per_axis(ws, "scales", i, k);
    const auto start = per_axis(ws, "roi_start", i, k), end = per_axis(ws, "roi_end", i, k);
    const auto align = per_axis(ws, "alignment", i, k), max_size = per_axis(ws, "max_size", i, k);
    const bool relative = spec_.arg<bool>("roi_relative");
    // Not named: the extent, a scale of 1, the whole axis, no limit beyond int's.
    const float no_limit = std::nextafter(float(std::numeric_limits<int>::max()), 0.f);
    std::vector<double> roi_lo(static_cast<size_t>(edim), 0.0), roi_hi(static_cast<size_t>(edim));
    for (int d = 0; d < edim; ++d) {
      auto& r = req[size_t(d)];
      r.size = float(shape[size_t(d)]);
      r.max_size = max_size.empty() ? 0.f : no_limit;
      roi_hi[size_t(d)] = relative ? 1.0 : double(shape[size_t(d)]);
    }
    for (size_t a = 0; a < k; ++a) {
      auto& r = req[size_t(axes[a])];
      const float extent = float(shape[size_t(axes[a])]);
      r.size = sizes.empty() ? float(scales[a]) * extent : float(sizes[a]);
      if (!align.empty()) r.alignment = float(align[a]);
      if (!max_size.empty()) r.max_size = float(max_size[a]);
      if (!start.empty()) roi_lo[size_t(axes[a])] = start[a], roi_hi[size_t(axes[a])] = end[a];
    }
    double elements = 1;
    for (int64_t e : shape) elements *= double(e);
    for (int d = 0; d < edim; ++d)
      axis_region(req[size_t(d)], shape[size_t(d)], !start.empty(), roi_lo[size_t(d)],
                  roi_hi[size_t(d)], relative);
    return resize_axes("tensor_resize", i, std::move(req), elements == 0,
                       spec_.arg<bool>("subpixel_scale"), mode_, rounding_, elements,
                       "sizes (scales)");
  }

  ResizeMode mode_ = ResizeMode::kDefault;
  SizeRounding rounding_ = SizeRounding::kRound;
};

#ifdef STOKER_HAVE_CUDA
class TensorResizeGpu final : public TensorResize {
 public:
  using TensorResize::TensorResize;

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto plan = make_plan(ws, in);
    Batch& out = add_planned_output(ws, in, plan);
    resampler_.run_gpu(*this, ws, in, out, plan);
  }
};
#endif

const char* kAlignmentDoc =
    "Per resized axis (one value: all), the point of the region that keeps its place when "
    "the output extent is rounded and subpixel_scale keeps the scale: (1 - alignment) * start "
    "+ alignment * end; 0 the start, 0.5 the centre (flip-invariant), 1 the end.";

}  // namespace

OpSchema tensor_resize_schema() {
  OpSchema s{
      .name = "tensor_resize",
      .doc =
          "Resizes any axes of tensors (uint8, uint16, int16 or float32), as DALI's "
          "tensor_resize: `sizes` or `scales` (output extent: size_rounding(scale * extent)) "
          "for the axes `axes` or `axis_names` (default: all), with resize's modes, "
          "max_size, regions of interest, filters and antialiasing. The resized axes must "
          "lie within 3 adjacent axes (those between them are resampled 1:1 with the filter); "
          "the axes before them are frames and those after them channels, resized "
          "independently. A 1-D input is resized as a row.",
      .inputs = {"input"},
      .outputs = {"resized"},
      .args = {optional_arg("sizes", ArgType::kFloatList,
                            "Output extents of the resized axes (one value: all); negative "
                            "flips, 0 derives the extent (mode)."),
               optional_arg("scales", ArgType::kFloatList,
                            "Scale factors of the resized axes (one value: all), instead of "
                            "sizes."),
               optional_arg("axes", ArgType::kIntList,
                            "The axes sizes, scales, max_size, alignment and the region refer "
                            "to (negative: from the back); default all.",
                            false),
               optional_arg("axis_names", ArgType::kString,
                            "The same by the input layout's names (not with axes).", false),
               {"size_rounding", ArgType::kString,
                "How scales' extents become whole: 'round' (half away from zero), "
                "'truncate' or 'ceil'.",
                std::string("round")},
               {"alignment", ArgType::kFloatList, kAlignmentDoc, std::vector<double>{0.5}, true},
               optional_arg("max_size", ArgType::kFloatList,
                            "Upper limit of the resized axes' extents (one value: all).", false),
               {"mode", ArgType::kString,
                "default | stretch | not_larger | not_smaller (as resize's; not with scales).",
                std::string("default")},
               {"subpixel_scale", ArgType::kBool,
                "Fractional extents keep their scale: the region grows or shrinks about the "
                "aligned point (False: the region maps to the rounded extent).",
                true},
               optional_arg("roi_start", ArgType::kFloatList,
                            "Start of the region of interest of the resized axes (with "
                            "roi_end); start > end flips."),
               optional_arg("roi_end", ArgType::kFloatList, "End of the region of interest."),
               {"roi_relative", ArgType::kBool,
                "roi_start/roi_end as fractions of the extents instead of elements.", false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<TensorResize>(s); },
      .make_gpu = STOKER_GPU_FACTORY(TensorResizeGpu),
      .example = OpExample{.args = {{"sizes", std::vector<double>{4, 4}},
                                    {"axes", std::vector<int64_t>{0, 1}}}},
      .deprecated_names = {"experimental.tensor_resize"},
  };
  for (auto& a : resize_interp_args()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
