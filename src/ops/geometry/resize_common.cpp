#include "stoker/ops/geometry/resize_common.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "stoker/core/error.hpp"
#include "stoker/kernels/resize/resize_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"

namespace stoker::ops {

namespace {
int64_t round_extent(double v) { return std::max<int64_t>(1, int64_t(std::floor(v + 0.5))); }
}  // namespace

std::pair<int64_t, int64_t> resize_output_size(double in_h, double in_w, const ResizeRequest& r) {
  auto [h, w] = resize_exact_size(in_h, in_w, r);
  return {round_extent(h), round_extent(w)};
}

std::pair<double, double> resize_exact_size(double in_h, double in_w, const ResizeRequest& r) {
  double h = in_h, w = in_w;
  double oh, ow;
  if (r.shorter > 0) {
    double s = r.shorter / std::min(h, w);
    oh = h * s, ow = w * s;
  } else if (r.longer > 0) {
    double s = r.longer / std::max(h, w);
    oh = h * s, ow = w * s;
  } else if (r.resize_y > 0 && r.resize_x > 0) {
    if (r.mode == "not_larger" || r.mode == "not_smaller") {
      double sy = r.resize_y / h, sx = r.resize_x / w;
      double s = r.mode == "not_larger" ? std::min(sy, sx) : std::max(sy, sx);
      oh = h * s, ow = w * s;
    } else {
      oh = r.resize_y, ow = r.resize_x;
    }
  } else if (r.resize_y > 0) {
    oh = r.resize_y, ow = w * r.resize_y / h;
  } else if (r.resize_x > 0) {
    ow = r.resize_x, oh = h * r.resize_x / w;
  } else {
    oh = h, ow = w;
  }
  // max_size caps each extent, keeping the aspect ratio unless the mode stretches.
  double cap = 1.0;
  if (r.max_h > 0 && oh > r.max_h) cap = std::min(cap, r.max_h / oh);
  if (r.max_w > 0 && ow > r.max_w) cap = std::min(cap, r.max_w / ow);
  if (r.mode == "stretch") {
    if (r.max_h > 0) oh = std::min(oh, r.max_h);
    if (r.max_w > 0) ow = std::min(ow, r.max_w);
  } else {
    oh *= cap, ow *= cap;
  }
  return {oh, ow};
}

void resize_sample(const Batch& in, int i, int64_t y0, int64_t x0, int64_t h, int64_t w, Batch& out,
                   kernels::ResizeFilters filter, bool antialias, std::vector<float>& scratch,
                   const kernels::ResizeRoi* roi) {
  const auto& is = in.shape(i);
  const auto& os = out.shape(i);
  const int64_t C = is[2];
  visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(
      in.dtype(), "resize input", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        kernels::ImageView<const In> src{static_cast<const In*>(in.data(i)), is[0], is[1], C,
                                         is[1] * C};
        auto win = src.window(y0, x0, h, w);
        visit_dtype<DType::kU8, DType::kU16, DType::kI16,
                    DType::kF32>(out.dtype(), "resize output", [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          kernels::ImageView<Out> dst{static_cast<Out*>(out.data(i)), os[0], os[1], C, os[1] * C};
          if (roi)
            kernels::resize_cpu<Out, In>(dst, win, filter, antialias, scratch, *roi);
          else
            kernels::resize_cpu<Out, In>(dst, win, filter, antialias, scratch);
        });
      });
}

kernels::ResizeFilters parse_interp(const OpSpec& spec, bool& antialias) {
  antialias = spec.arg<bool>("antialias");
  auto parse = [&](const char* arg) {
    try {
      return kernels::parse_filter(spec.arg<std::string>(arg));
    } catch (const ValueError& e) {
      throw ValueError(spec.schema->name + ": " + arg + " " + e.what());
    }
  };
  const kernels::Filter all = parse("interp_type");
  return {spec.has_arg("min_filter") ? parse("min_filter") : all,
          spec.has_arg("mag_filter") ? parse("mag_filter") : all};
}

DType resize_output_dtype(const OpSpec& spec, DType input) {
  return spec.has_arg("dtype") ? dtype_from_name(spec.arg<std::string>("dtype")) : input;
}

std::vector<ArgSchema> resize_interp_args() {
  return {{"interp_type", ArgType::kString,
           "Filter: 'nn' (nearest: the pixel under the sample position), 'linear' (triangle, "
           "radius 1), 'triangular' (linear, as in DALI), 'cubic' (Keys, a = -0.5, as "
           "PIL's BICUBIC), 'lanczos3' (as PIL's LANCZOS) or 'gaussian' (DALI's: sigma "
           "R / (2 sqrt 2) over R = 1 pixel, or the scale when antialiasing a shrink); DALI's "
           "INTERP_* names too.",
           std::string("linear")},
          optional_arg("min_filter", ArgType::kString,
                       "The filter of an axis that shrinks (fewer output pixels than the input "
                       "extent; interp_type's names), replacing interp_type's there (DALI's).",
                       false),
          optional_arg("mag_filter", ArgType::kString,
                       "The filter of an axis that grows or keeps its size, replacing "
                       "interp_type's there (DALI's).",
                       false),
          {"antialias", ArgType::kBool,
           "When downscaling, widen the filter to the scale factor (PIL/torchvision "
           "antialias=True); otherwise sample with the plain filter.",
           true},
          {"dtype", ArgType::kDType,
           "Output dtype (uint8, uint16, int16 or float32; default: the input's).", std::nullopt,
           false, true}};
}

std::vector<ArgSchema> resize_size_args() {
  return {{"resize_x", ArgType::kFloat, "Output width (0: derived).", 0.0, true},
          {"resize_y", ArgType::kFloat, "Output height (0: derived).", 0.0, true},
          {"resize_z", ArgType::kFloat,
           "Output depth of a volume (DHWC, CDHW; 0: derived). Images ignore it, as DALI's do.",
           0.0, true},
          {"size", ArgType::kFloatList,
           "[height, width], for volumes [depth, height, width] (one value: all); 0 entries are "
           "derived.",
           std::vector<double>{}, true},
          {"resize_shorter", ArgType::kFloat, "Length of the shorter side (or extent).", 0.0, true},
          {"resize_longer", ArgType::kFloat, "Length of the longer side (or extent).", 0.0, true},
          {"max_size", ArgType::kFloatList,
           "Upper limit of [height, width], for volumes [depth, height, width] (or one value for "
           "all).",
           std::vector<double>{}, true},
          {"mode", ArgType::kString, "default | stretch | not_larger | not_smaller.",
           std::string("default")},
          {"subpixel_scale", ArgType::kBool,
           "When the computed size is fractional (a 31-pixel side scaled by 1.5), keep the "
           "scale factor exactly: the rounded output samples a region slightly larger or "
           "smaller about the same centre (DALI's default). False: the source maps to the "
           "rounded output.",
           true},
          {"roi_start", ArgType::kFloatList,
           "Start [y, x] (volumes: [z, y, x], or one value for all) of the region of interest "
           "(with roi_end): the region is "
           "resampled to the output, its extent |end - start| standing for the input's "
           "in the size rules; fractional coordinates allowed, start > end flips that "
           "axis; the filter may read pixels around the region (it is a sampling grid, "
           "not a crop).",
           std::vector<double>{}, true},
          {"roi_end", ArgType::kFloatList,
           "End [y, x] (volumes: [z, y, x], or one value for all) of the region of interest.",
           std::vector<double>{}, true},
          {"roi_relative", ArgType::kBool,
           "roi_start/roi_end as fractions of the extents instead of pixels.", false}};
}

std::optional<SpatialAxes> volume_axes(const TensorLayout& layout) {
  if (layout.str() == "DHWC") return SpatialAxes{0, 3};
  if (layout.str() == "CDHW") return SpatialAxes{1, 3};
  return std::nullopt;
}

std::optional<SpatialAxes> tensor_axes(const TensorLayout& layout) {
  if (layout.str() == "CHW") return SpatialAxes{1, 2};
  if (layout.str() == "CFHW") return SpatialAxes{2, 2};
  return volume_axes(layout);
}

ImageResizeArgs::ImageResizeArgs(const OpSpec& spec)
    : name_(spec.schema->name),
      mode_(spec.arg<std::string>("mode")),
      subpixel_scale_(spec.arg<bool>("subpixel_scale")),
      roi_relative_(spec.arg<bool>("roi_relative")) {
  STOKER_ENFORCE(
      mode_ == "default" || mode_ == "stretch" || mode_ == "not_larger" || mode_ == "not_smaller",
      ValueError, name_, ": unknown mode '", mode_,
      "'; expected default, stretch, not_larger or not_smaller");
}

ImageResizePlan ImageResizeArgs::plan(const Operator& op, const Workspace& ws, const Batch& in,
                                      int i) const {
  auto s = image_shape(in, i, name_);
  ImageResizePlan out;
  auto& roi = out.roi;
  roi = region_of_interest(op, ws, i, s.height, s.width);
  ResizeRequest r;
  r.mode = mode_;
  r.resize_x = op.scalar_arg(ws, "resize_x", i);
  r.resize_y = op.scalar_arg(ws, "resize_y", i);
  r.shorter = op.scalar_arg(ws, "resize_shorter", i);
  r.longer = op.scalar_arg(ws, "resize_longer", i);
  auto size = op.list_arg(ws, "size", i);
  STOKER_ENFORCE(size.size() <= 2, ValueError, name_,
                 ": size must be [height, width] (or one value for both), got ", size.size(),
                 " values");
  if (size.size() == 1) r.resize_y = r.resize_x = size[0];
  if (size.size() == 2) r.resize_y = size[0], r.resize_x = size[1];
  auto max_size = op.list_arg(ws, "max_size", i);
  if (max_size.size() == 1) r.max_h = r.max_w = max_size[0];
  if (max_size.size() == 2) r.max_h = max_size[0], r.max_w = max_size[1];
  const double in_h = roi ? std::fabs(roi->y1 - roi->y0) : double(s.height);
  const double in_w = roi ? std::fabs(roi->x1 - roi->x0) : double(s.width);
  // Bounded before the sizes are rounded to integers (arg_limits.hpp).
  const auto [want_h, want_w] = resize_exact_size(in_h, in_w, r);
  check_arg_elements(name_, "resize_x, resize_y, size, resize_shorter and resize_longer",
                     std::vector<double>{want_h, want_w}, i, double(s.height) * double(s.width));
  auto [h, w] = resize_output_size(in_h, in_w, r);
  out.shape = TensorShape{h, w, s.channels};
  if (subpixel_scale_ && (double(h) != want_h || double(w) != want_w)) {
    // DALI's subpixel_scale: a fractional size (46.5) keeps its scale factor; the rounded
    // output (47) samples a slightly larger region about the same centre.
    kernels::ResizeRoi g = roi ? *roi : kernels::ResizeRoi{0, double(s.height), 0, double(s.width)};
    const auto widen = [](double& lo, double& hi, double k) {
      const double c = (lo + hi) / 2, half = (hi - lo) / 2 * k;
      lo = c - half, hi = c + half;
    };
    widen(g.y0, g.y1, double(h) / want_h);
    widen(g.x0, g.x1, double(w) / want_w);
    roi = g;
  }
  if (roi) {
    // Kept in float32, as DALI keeps it (nearest-neighbour positions on pixel boundaries go
    // where DALI's go). Through an array: GCC 12's SLP vectorizer drops a double -> float ->
    // double round trip of paired values.
    const std::array<float, 4> f{float(roi->y0), float(roi->y1), float(roi->x0), float(roi->x1)};
    roi = kernels::ResizeRoi{f[0], f[1], f[2], f[3]};
  }
  return out;
}

std::vector<double> ImageResizeArgs::per_axis(const Operator& op, const Workspace& ws,
                                              const char* arg, int i, int count) const {
  auto v = op.list_arg(ws, arg, i);
  if (v.size() == 1) v.assign(size_t(count), v[0]);
  STOKER_ENFORCE(v.empty() || int(v.size()) == count, ValueError, name_, ": ", arg,
                 " needs one value per axis of a volume (depth, height, width) or one for all, "
                 "got ",
                 v.size(), " values");
  return v;
}

std::vector<AxisResize> ImageResizeArgs::volume_plan(const Operator& op, const Workspace& ws,
                                                     const Batch& in, int i,
                                                     SpatialAxes axes) const {
  const auto& s = in.shape(i);
  STOKER_ENFORCE(s.ndim() == int(in.layout().str().size()), ValueError, name_, ": sample ", i,
                 " has shape ", s.to_string(), ", which layout '", in.layout().str(),
                 "' does not describe");
  const int n = axes.count;
  // The requested extents, outermost first, as DALI's ResizeAttr: resize_shorter (the mode
  // not_smaller) or resize_longer (not_larger) for every axis, else size, else resize_z,
  // resize_y, resize_x. 0: derived by the mode.
  ResizeMode mode = parse_resize_mode(name_, mode_);
  std::vector<double> want;
  const double shorter = op.scalar_arg(ws, "resize_shorter", i);
  const double longer = op.scalar_arg(ws, "resize_longer", i);
  if (shorter > 0 || longer > 0) {
    want.assign(size_t(n), shorter > 0 ? shorter : longer);
    mode = shorter > 0 ? ResizeMode::kNotSmaller : ResizeMode::kNotLarger;
  } else {
    want = per_axis(op, ws, "size", i, n);
    if (want.empty() && n == 3)
      want = {op.scalar_arg(ws, "resize_z", i), op.scalar_arg(ws, "resize_y", i),
              op.scalar_arg(ws, "resize_x", i)};
    else if (want.empty())
      want = {op.scalar_arg(ws, "resize_y", i), op.scalar_arg(ws, "resize_x", i)};
  }
  const auto max_size = per_axis(op, ws, "max_size", i, n);
  const auto start = per_axis(op, ws, "roi_start", i, n), end = per_axis(op, ws, "roi_end", i, n);
  STOKER_ENFORCE(start.empty() == end.empty(), ValueError, name_,
                 ": roi_start and roi_end must be given together");
  std::vector<AxisRequest> req(static_cast<size_t>(n));
  double spatial = 1;
  for (int d = 0; d < n; ++d) {
    const int64_t extent = s[axes.first + d];
    spatial *= double(extent);
    auto& r = req[size_t(d)];
    r.size = float(want[size_t(d)]);
    if (!max_size.empty()) r.max_size = float(max_size[size_t(d)]);
    axis_region(r, extent, !start.empty(), start.empty() ? 0 : start[size_t(d)],
                end.empty() ? 0 : end[size_t(d)], roi_relative_);
  }
  const auto spatial_axes = resize_axes(
      name_, i, std::move(req), s.volume() == 0, subpixel_scale_, mode, SizeRounding::kRound,
      spatial, "resize_x, resize_y, resize_z, size, resize_shorter and resize_longer");
  std::vector<AxisResize> out;
  for (int d = 0; d < s.ndim(); ++d)
    out.push_back(d >= axes.first && d < axes.first + n ? spatial_axes[size_t(d - axes.first)]
                                                        : kept_axis(s[d]));
  return out;
}

// roi_start/roi_end ([y, x], pixels or with roi_relative fractions of the extents), or none.
std::optional<kernels::ResizeRoi> ImageResizeArgs::region_of_interest(const Operator& op,
                                                                      const Workspace& ws, int i,
                                                                      int64_t h, int64_t w) const {
  auto start = op.list_arg(ws, "roi_start", i), end = op.list_arg(ws, "roi_end", i);
  if (start.empty() && end.empty()) return std::nullopt;
  for (auto* v : {&start, &end})  // float32 arguments, as DALI's
    for (double& e : *v) e = float(e);
  STOKER_ENFORCE(start.size() == 2 && end.size() == 2, ValueError, name_,
                 ": roi_start and roi_end need 2 values each ([y, x]), got ", start.size(), " and ",
                 end.size());
  if (roi_relative_) {
    start[0] *= double(h), end[0] *= double(h);
    start[1] *= double(w), end[1] *= double(w);
  }
  STOKER_ENFORCE(start[0] != end[0] && start[1] != end[1], ValueError, name_,
                 ": the region of interest of sample ", i, " is empty (roi_start [", start[0], ", ",
                 start[1], "], roi_end [", end[0], ", ", end[1], "])");
  return kernels::ResizeRoi{start[0], end[0], start[1], end[1]};
}

bool interp_is_linear(const OpSpec& spec) {
  const auto name = spec.arg<std::string>("interp_type");
  const auto f = [&] {
    try {
      return kernels::parse_filter(name);
    } catch (const ValueError& e) {
      throw ValueError(spec.schema->name + ": interp_type " + e.what());
    }
  }();
  STOKER_ENFORCE(f == kernels::Filter::kLinear || f == kernels::Filter::kNearest, ValueError,
                 spec.schema->name, ": interp_type must be 'linear' or 'nn', got '", name, "'");
  return f == kernels::Filter::kLinear;
}

}  // namespace stoker::ops
