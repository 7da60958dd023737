// tensor_resize: DALI's TensorResize. Any axes of a tensor are resized (sizes or scales, with
// DALI's modes, regions of interest and rounding: tensor_resize_plan); the resampled axes are
// at most 3 adjacent ones, the axes before them frames and those after them channels. Two
// axes run through resize's kernel (resize_cpu, the GPU's resample kernel), three through a
// plane pass and a depth pass (resize_volume_cpu; on the GPU the same two passes, the second
// with the slices as rows).
#include "stoker/ops/geometry/tensor_resize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "stoker/kernels/resize/resize_volume_cpu.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/geometry/tensor_resize_plan.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// The batch's plan: per sample, the (at least 2-D) input shape and each axis's resize; the
// block of axes resampled.
struct TensorPlan {
  int added = 0;  // leading axes of extent 1 added to a 1-D input
  std::vector<std::vector<int64_t>> in_shapes;
  std::vector<std::vector<AxisResize>> axes;
  ResizeBlock block;
};

// Sample i's tensor as frames x block x channels.
struct Frames {
  bool volume = false;  // a 3-D block
  int64_t count = 1, channels = 1;
  kernels::VolumeShape in, out;  // depth 1 for a 2-D block
  kernels::VolumeRoi roi{0, 1, {0, 0, 0, 0}};
};

class TensorResize : public Operator {
 public:
  explicit TensorResize(const OpSpec& spec) : Operator(spec) {
    filter_ = parse_interp(spec, antialias_);
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
    const int n = in.size();
    auto plan = make_plan(ws, in);
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) shapes[size_t(i)] = output_shape(plan, i);
    Batch& out =
        add_output(ws, resize_output_dtype(spec_, in.dtype()), std::move(shapes), in.layout());
    scratch_.ensure(ws.pool->num_threads());
    slices_.ensure(ws.pool->num_threads());
    for_each_sample(ws, n, [&](int i, int thread) {
      if (out.shape(i).volume() == 0) return;
      const Frames f = frames(plan, i);
      visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(
          in.dtype(), "tensor_resize input", [&](auto in_tag) {
            using In = typename decltype(in_tag)::type;
            visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(
                out.dtype(), "tensor_resize output", [&](auto out_tag) {
                  using Out = typename decltype(out_tag)::type;
                  resize_frames<Out, In>(f, static_cast<const In*>(in.data(i)),
                                         static_cast<Out*>(out.data(i)), thread);
                });
          });
    });
  }

 protected:
  TensorPlan make_plan(Workspace& ws, const Batch& in) const {
    const int n = in.size();
    TensorPlan p;
    if (n == 0) return p;
    const auto supported = [](DType t) {
      return t == DType::kU8 || t == DType::kU16 || t == DType::kI16 || t == DType::kF32;
    };
    const DType out_type = resize_output_dtype(spec_, in.dtype());
    STOKER_ENFORCE(supported(in.dtype()) && supported(out_type), ValueError,
                   "tensor_resize: takes and gives uint8, uint16, int16 or float32 data, got ",
                   dtype_name(in.dtype()), " to ", dtype_name(out_type));
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

  static TensorShape output_shape(const TensorPlan& p, int i) {
    std::vector<int64_t> dims;
    for (size_t d = size_t(p.added); d < p.axes[size_t(i)].size(); ++d)
      dims.push_back(p.axes[size_t(i)][d].out);
    return TensorShape(std::move(dims));
  }

  // An axis's region for the kernels, which take double: one float32 could not widen (its
  // ends equal) samples its point through a region of a thousandth of an element.
  static std::pair<double, double> region(const AxisResize& a) {
    return {a.lo, a.lo == a.hi ? double(a.hi) + 1e-3 : double(a.hi)};
  }

  static Frames frames(const TensorPlan& p, int i) {
    const auto& s = p.in_shapes[size_t(i)];
    const auto& a = p.axes[size_t(i)];
    const int first = p.block.first, end = first + p.block.count;
    Frames f;
    for (int d = 0; d < first; ++d) f.count *= s[size_t(d)];
    for (int d = end; d < int(s.size()); ++d) f.channels *= s[size_t(d)];
    const int y = end - 2, x = end - 1;  // the plane's axes; a 3-D block adds the depth first
    f.in = {1, s[size_t(y)], s[size_t(x)], f.channels};
    f.out = {1, a[size_t(y)].out, a[size_t(x)].out, f.channels};
    const auto [y0, y1] = region(a[size_t(y)]);
    const auto [x0, x1] = region(a[size_t(x)]);
    f.roi.plane = {y0, y1, x0, x1};
    if (p.block.count == 3) {
      f.volume = true;
      f.in.depth = s[size_t(first)], f.out.depth = a[size_t(first)].out;
      std::tie(f.roi.z0, f.roi.z1) = region(a[size_t(first)]);
    }
    return f;
  }

  kernels::ResizeFilters filter_;
  bool antialias_ = true;

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
                       spec_.arg<bool>("subpixel_scale"), mode_, rounding_, elements);
  }

  template <typename Out, typename In>
  void resize_frames(const Frames& f, const In* in, Out* out, int thread) {
    const int64_t in_len = f.in.depth * f.in.plane(), out_len = f.out.depth * f.out.plane();
    for (int64_t k = 0; k < f.count; ++k) {
      if (!f.volume)
        kernels::resize_cpu<Out, In>(
            kernels::dense_image(out + k * out_len, f.out.height, f.out.width, f.channels),
            kernels::dense_image(in + k * in_len, f.in.height, f.in.width, f.channels), filter_,
            antialias_, scratch_.get(thread), f.roi.plane);
      else
        kernels::resize_volume_cpu<Out, In>(out + k * out_len, f.out, in + k * in_len, f.in,
                                            filter_, antialias_, f.roi, slices_.get(thread),
                                            scratch_.get(thread));
    }
  }

  ResizeMode mode_ = ResizeMode::kDefault;
  SizeRounding rounding_ = SizeRounding::kRound;
  ResizeScratch scratch_, slices_;
};

#ifdef STOKER_HAVE_CUDA
// One resampling of a 2-D image (a frame, a slice, or a volume seen as slices x plane) on the
// device.
struct GpuImage {
  const void* in;
  TensorShape in_shape;  // HWC
  void* out;
  TensorShape out_shape;
  ResamplePlan plan;
};

class TensorResizeGpu final : public TensorResize {
 public:
  using TensorResize::TensorResize;

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    auto plan = make_plan(ws, in);
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) shapes[size_t(i)] = output_shape(plan, i);
    Batch& out =
        add_output(ws, resize_output_dtype(spec_, in.dtype()), std::move(shapes), in.layout());
    const size_t in_size = dtype_size(in.dtype()), out_size = dtype_size(out.dtype());
    // Volumes go through a float intermediate, planes first or depth first as on the CPU.
    std::vector<GpuImage> direct, first, second;
    std::vector<std::pair<Frames, int>> volumes;
    int64_t temp = 0;
    for (int i = 0; i < n; ++i) {
      if (out.shape(i).volume() == 0) continue;
      const Frames f = frames(plan, i);
      if (f.volume) {
        volumes.emplace_back(f, i);
        const bool planes = kernels::planes_first(f.out, f.in);
        temp += f.count * (planes ? f.in.depth * f.out.plane() : f.out.depth * f.in.plane());
        continue;
      }
      for (int64_t k = 0; k < f.count; ++k)
        direct.push_back(
            {static_cast<const uint8_t*>(in.data(i)) + k * f.in.plane() * int64_t(in_size),
             TensorShape{f.in.height, f.in.width, f.channels},
             static_cast<uint8_t*>(out.data(i)) + k * f.out.plane() * int64_t(out_size),
             TensorShape{f.out.height, f.out.width, f.channels}, plane_plan(f)});
    }
    launch(ws, direct, in.dtype(), out.dtype());
    if (volumes.empty()) return;
    auto buffer = ws.device_pool->acquire_on(size_t(temp) * sizeof(float), ws.stream);
    float* t = static_cast<float*>(buffer->data());
    for (const auto& [f, i] : volumes) {
      const bool planes = kernels::planes_first(f.out, f.in);
      for (int64_t k = 0; k < f.count; ++k) {
        const auto* src = static_cast<const uint8_t*>(in.data(i)) +
                          k * f.in.depth * f.in.plane() * int64_t(in_size);
        auto* dst = static_cast<uint8_t*>(out.data(i)) +
                    k * f.out.depth * f.out.plane() * int64_t(out_size);
        // The volume as rows of slices: depth x (plane / channels) x channels.
        const auto rows = [&](const kernels::VolumeShape& v) {
          return TensorShape{v.depth, v.height * v.width, v.channels};
        };
        ResamplePlan depth;
        depth.rows_only = true;
        depth.roi = {f.roi.z0, f.roi.z1, 0, 0};
        depth.filter = filter_, depth.antialias = antialias_;
        if (planes) {
          const kernels::VolumeShape mid{f.in.depth, f.out.height, f.out.width, f.channels};
          for (int64_t z = 0; z < f.in.depth; ++z)
            first.push_back({src + z * f.in.plane() * int64_t(in_size),
                             TensorShape{f.in.height, f.in.width, f.channels}, t + z * mid.plane(),
                             TensorShape{f.out.height, f.out.width, f.channels}, plane_plan(f)});
          second.push_back({t, rows(mid), dst, rows(f.out), depth});
          t += mid.depth * mid.plane();
        } else {
          const kernels::VolumeShape mid{f.out.depth, f.in.height, f.in.width, f.channels};
          first.push_back({src, rows(f.in), t, rows(mid), depth});
          for (int64_t z = 0; z < f.out.depth; ++z)
            second.push_back({t + z * mid.plane(), TensorShape{f.in.height, f.in.width, f.channels},
                              dst + z * f.out.plane() * int64_t(out_size),
                              TensorShape{f.out.height, f.out.width, f.channels}, plane_plan(f)});
          t += mid.depth * mid.plane();
        }
      }
    }
    launch(ws, first, in.dtype(), DType::kF32);
    launch(ws, second, DType::kF32, out.dtype());
  }

 private:
  ResamplePlan plane_plan(const Frames& f) const {
    ResamplePlan p;
    p.roi = f.roi.plane;
    p.filter = filter_, p.antialias = antialias_;
    return p;
  }

  // Runs the images on the resampling kernel: one launch per channel count (a launch takes
  // one) and per 32768 images (the grid's limit is 65535 samples).
  void launch(Workspace& ws, const std::vector<GpuImage>& images, DType in_type,
              DType out_type) const {
    std::map<int64_t, std::vector<const GpuImage*>> by_channels;
    for (const auto& g : images) by_channels[g.in_shape[2]].push_back(&g);
    constexpr size_t kChunk = 32768;
    for (const auto& [channels, all] : by_channels) {
      for (size_t at = 0; at < all.size(); at += kChunk) {
        const int m = int(std::min(kChunk, all.size() - at));
        Batch src = Batch::with_samples(m, in_type, "HWC", MemoryKind::kDevice);
        Batch dst = Batch::with_samples(m, out_type, "HWC", MemoryKind::kDevice);
        std::vector<ResamplePlan> plans;
        for (int k = 0; k < m; ++k) {
          const GpuImage& g = *all[at + size_t(k)];
          src.set_sample(k, nullptr, const_cast<void*>(g.in), g.in_shape);
          dst.set_sample(k, nullptr, g.out, g.out_shape);
          plans.push_back(g.plan);
        }
        run_resample_gpu(*this, ws, src, dst, plans, identity_resample_params(src));
      }
    }
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
