// resize_crop_mirror: resize, then crop, then flip, done as DALI does it: the crop window is
// mapped back through the resize to a region of the input, and only that region is resampled
// (flipped by swapping its ends). The pixels are those of a resize whose sampling grid is the
// window's: not resize + crop + flip bit for bit (DALI's neither), within a level of it.
#include "stoker/ops/geometry/resize_crop_mirror.hpp"

#include <array>
#include <cmath>
#include <utility>

#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/geometry/tensor_resample.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class ResizeCropMirror : public Operator {
 public:
  explicit ResizeCropMirror(const OpSpec& spec) : Operator(spec), resampler_(spec), args_(spec) {
    filter_ = parse_interp(spec, antialias_);
    const auto rounding = spec.arg<std::string>("rounding");
    STOKER_ENFORCE(rounding == "round" || rounding == "truncate", ValueError, name(),
                   ": rounding must be 'round' or 'truncate', got '", rounding, "'");
    truncate_ = rounding == "truncate";
    const bool has_h = spec.given("crop_h"), has_w = spec.given("crop_w");
    STOKER_ENFORCE(has_h == has_w, ValueError, name(),
                   ": crop_w and crop_h must be given together");
    STOKER_ENFORCE(!spec.given("crop_d") || has_h, ValueError, name(),
                   ": crop_d must be given with crop_h and crop_w");
    STOKER_ENFORCE(!spec.given("crop") || !has_h, ValueError, name(),
                   ": crop cannot be given with crop_h and crop_w");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    if (auto axes = tensor_axes(in.layout())) {
      auto plan = volume_plan(ws, in, *axes);
      Batch& out =
          add_output(ws, resampled_dtype(spec_, in.dtype()), planned_shapes(plan), in.layout());
      resampler_.ensure(ws.pool->num_threads());
      for_each_sample(ws, n,
                      [&](int i, int thread) { resampler_.run_sample(plan, in, out, i, thread); });
      return;
    }
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    std::vector<kernels::ResizeRoi> rois(static_cast<size_t>(n));
    for_each_sample(ws, n,
                    [&](int i, int) { rois[size_t(i)] = plan(ws, in, i, shapes[size_t(i)]); });
    Batch& out = add_output(ws, resize_output_dtype(spec_, in.dtype()), std::move(shapes), "HWC");
    scratch_.ensure(ws.pool->num_threads());
    for_each_sample(ws, n, [&](int i, int thread) {
      const auto& s = in.shape(i);
      resize_sample(in, i, 0, 0, s[0], s[1], out, filter_, antialias_, scratch_.get(thread),
                    &rois[size_t(i)]);
    });
  }

 protected:
  const std::string& name() const { return spec_.schema->name; }

  // Sample i's output shape and the region of the input it resamples (DALI's
  // ResizeCropMirrorAttr: the resize's region, narrowed to the crop window and flipped).
  kernels::ResizeRoi plan(const Workspace& ws, const Batch& in, int i, TensorShape& shape) const {
    const auto& s = in.shape(i);
    auto resized = args_.plan(*this, ws, in, i);
    const kernels::ResizeRoi r =
        resized.roi ? *resized.roi : kernels::ResizeRoi{0, double(s[0]), 0, double(s[1])};
    const int64_t rh = resized.shape[0], rw = resized.shape[1];
    auto [ch, cw] = crop_extents(ws, i, double(s[0]) * double(s[1]));
    if (ch <= 0) ch = rh;  // an extent not given (or not positive) keeps the resized one
    if (cw <= 0) cw = rw;
    const float py = crop_pos(ws, "crop_pos_y", i), px = crop_pos(ws, "crop_pos_x", i);
    const int64_t mirror = int64_t(scalar_arg(ws, "mirror", i));
    const auto y = narrow(r.y0, r.y1, rh, anchor(py, rh, ch), ch, (mirror & 2) != 0);
    const auto x = narrow(r.x0, r.x1, rw, anchor(px, rw, cw), cw, (mirror & 1) != 0);
    const kernels::ResizeRoi w{y[0], y[1], x[0], x[1]};
    shape = TensorShape{ch, cw, s[2]};
    return w;
  }

  // A batch of volumes or CHW images (spatial axes `axes`): the resize's extents and regions,
  // each spatial axis narrowed to the crop window (crop = [d, h, w], or [h, w] keeping the depth;
  // crop_d, crop_h, crop_w) and flipped by its mirror bit (4 depth, 2 vertical, 1 horizontal), as
  // DALI's ResizeCropMirrorAttr does on DHWC volumes and HWC images.
  TensorPlan volume_plan(Workspace& ws, const Batch& in, SpatialAxes axes) const {
    const int n = in.size();
    resampled_dtype(spec_, in.dtype());  // checked before anything is planned
    TensorPlan p;
    p.block = {axes.first, axes.count};
    p.in_shapes.resize(size_t(n));
    p.axes.resize(size_t(n));
    for_each_sample(ws, n, [&](int i, int) {
      auto a = args_.volume_plan(*this, ws, in, i, axes);
      const auto& s = in.shape(i);
      // Images (2 spatial axes) take the last two of depth, height and width.
      const int skip = 3 - axes.count;
      double spatial = 1;
      for (int k = 0; k < axes.count; ++k) spatial *= double(s[axes.first + k]);
      std::array<int64_t, 3> crop{};
      if (skip == 0) {
        crop = volume_crop(ws, i, spatial);
      } else {
        const auto hw = crop_extents(ws, i, spatial);
        crop = {0, hw.first, hw.second};
      }
      const std::array<float, 3> pos{skip ? 0.f : crop_pos(ws, "crop_pos_z", i),
                                     crop_pos(ws, "crop_pos_y", i), crop_pos(ws, "crop_pos_x", i)};
      const int64_t mirror = int64_t(scalar_arg(ws, "mirror", i));
      for (int k = skip; k < 3; ++k) {
        auto& r = a[size_t(axes.first + k - skip)];
        const int64_t c = crop[size_t(k)] > 0 ? crop[size_t(k)] : r.out;
        const auto ends = narrow(r.lo, r.hi, r.out, anchor(pos[size_t(k)], r.out, c), c,
                                 (mirror & (int64_t(1) << (2 - k))) != 0);
        r = {c, ends[0], ends[1]};
      }
      p.axes[size_t(i)] = std::move(a);
      p.in_shapes[size_t(i)] = s.dims();
    });
    return p;
  }

  kernels::ResizeFilters filter_;
  bool antialias_ = true;
  TensorResampler resampler_;

 private:
  // A window position (crop_pos_x, _y or _z) of sample i, a float32 in [0, 1].
  float crop_pos(const Workspace& ws, const char* arg, int i) const {
    const float pos = float(scalar_arg(ws, arg, i));
    STOKER_ENFORCE(pos >= 0 && pos <= 1, ValueError, name(), ": ", arg, " must be in [0, 1], got ",
                   pos, " (sample ", i, ")");
    return pos;
  }

  // DALI's anchor: the float32 position times (extent - crop), in double, rounded half away
  // from zero (or truncated): 0.9 of 5 is 4.4999999 and rounds to 4. A window larger than the
  // image starts before it.
  double anchor(float pos, int64_t extent, int64_t crop) const {
    const double a = double(pos) * double(extent - crop);
    return truncate_ ? std::trunc(a) : std::round(a);
  }

  // Output pixel k of the window is resized pixel anchor + k, which samples the input at
  // lo + (anchor + k + 0.5) * (hi - lo) / extent: the window's region of the input. Its ends
  // are float32, as DALI keeps them (nearest-neighbour sampling lands where DALI's does when a
  // centre falls on a pixel boundary), through an array (GCC 12's SLP vectorizer drops a double
  // -> float -> double round trip of paired values).
  static std::array<float, 2> narrow(double lo, double hi, int64_t extent, double a, int64_t crop,
                                     bool flip) {
    const double ratio = (hi - lo) / double(extent);
    std::array<float, 2> ends{float(a * ratio + lo), float((a + double(crop)) * ratio + lo)};
    if (flip) std::swap(ends[0], ends[1]);
    return ends;
  }

  // The window's [height, width] from crop or crop_h/crop_w, their float32 values truncated to
  // whole pixels as DALI's (10.99999999 is 11 in float32); 0 where not given.
  std::pair<int64_t, int64_t> crop_extents(const Workspace& ws, int i, double in_elements) const {
    double ch = scalar_arg(ws, "crop_h", i), cw = scalar_arg(ws, "crop_w", i);
    if (auto crop = list_arg(ws, "crop", i); !crop.empty()) {
      STOKER_ENFORCE(crop.size() == 2, ValueError, name(),
                     ": crop must be [height, width] for an image ([depth, height, width] for a "
                     "volume), got ",
                     crop.size(), " values (sample ", i, ")");
      ch = crop[0], cw = crop[1];
    }
    // Bounded before they are made integers: the window is the output (arg_limits.hpp).
    check_arg_elements(name(), "crop (crop_h, crop_w)",
                       std::vector<double>{std::max(ch, 1.0), std::max(cw, 1.0)}, i, in_elements);
    return {int64_t(float(ch)), int64_t(float(cw))};
  }

  // The same for a volume: [depth, height, width] from crop (2 values: [height, width], the
  // depth kept, as DALI's) or crop_d/crop_h/crop_w.
  std::array<int64_t, 3> volume_crop(const Workspace& ws, int i, double in_elements) const {
    std::array<double, 3> c{scalar_arg(ws, "crop_d", i), scalar_arg(ws, "crop_h", i),
                            scalar_arg(ws, "crop_w", i)};
    if (auto crop = list_arg(ws, "crop", i); !crop.empty()) {
      STOKER_ENFORCE(crop.size() == 2 || crop.size() == 3, ValueError, name(),
                     ": crop must be [depth, height, width] or [height, width] for a volume, got ",
                     crop.size(), " values (sample ", i, ")");
      c = crop.size() == 3 ? std::array<double, 3>{crop[0], crop[1], crop[2]}
                           : std::array<double, 3>{0, crop[0], crop[1]};
    }
    check_arg_elements(
        name(), "crop (crop_d, crop_h, crop_w)",
        std::vector<double>{std::max(c[0], 1.0), std::max(c[1], 1.0), std::max(c[2], 1.0)}, i,
        in_elements);
    return {int64_t(float(c[0])), int64_t(float(c[1])), int64_t(float(c[2]))};
  }

  ImageResizeArgs args_;
  bool truncate_ = false;
  ResizeScratch scratch_;
};

#ifdef STOKER_HAVE_CUDA
class ResizeCropMirrorGpu final : public ResizeCropMirror, public ResamplingStep {
 public:
  using ResizeCropMirror::ResizeCropMirror;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (auto axes = tensor_axes(in.layout())) {
      auto plan = volume_plan(ws, in, *axes);
      Batch& out =
          add_output(ws, resampled_dtype(spec_, in.dtype()), planned_shapes(plan), in.layout());
      resampler_.run_gpu(*this, ws, in, out, plan);
      return;
    }
    run_step(*this, *this, ws);
  }
  Output plan_step(Workspace& ws, const Batch& in) override {
    const int n = in.size();
    Output o;
    o.shapes.resize(size_t(n));
    o.plans.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      auto& p = o.plans[size_t(i)];
      p.roi = plan(ws, in, i, o.shapes[size_t(i)]);
      p.filter = filter_;
      p.antialias = antialias_;
    }
    check_uniform_channels(in, name());
    o.dtype = resize_output_dtype(spec_, in.dtype());
    o.layout = "HWC";
    o.params = identity_resample_params(in);
    return o;
  }
};
#endif

}  // namespace

OpSchema resize_crop_mirror_schema() {
  OpSchema s{
      .name = "resize_crop_mirror",
      .doc =
          "Resizes HWC images as `resize` does (same size arguments, modes, region of "
          "interest and filters), crops a window of the result as `crop` does (`crop` or "
          "crop_h/crop_w, truncated to whole pixels; crop_pos_x/crop_pos_y; `rounding` of the "
          "anchor) and flips it (`mirror`: 1 horizontal, 2 vertical, 3 both), in one pass as "
          "DALI does: the window is mapped back to a region of the input and only that region "
          "is resampled. Not given, the window is the whole resized image; a window larger "
          "than it repeats the edge pixels. Volumes (DHWC, CDHW; FDHWC and FCDHW clips) as "
          "DALI's: resized as `resize` resizes them, the window [d, h, w] (`crop`, or "
          "crop_d/crop_h/crop_w; a `crop` of [h, w] keeps the depth) at crop_pos_z/_y/_x, "
          "mirror bit 4 flipping the depth. Channel-first images (CHW; FCHW and CFHW clips) "
          "as their HWC twins, plane by plane.",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = resize_size_args(),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ResizeCropMirror>(s); },
      .make_gpu = STOKER_GPU_FACTORY(ResizeCropMirrorGpu),
      .sequences = true,
      .example = OpExample{.args = {{"size", std::vector<double>{4, 4}},
                                    {"crop", std::vector<double>{2, 2}}}},
  };
  for (auto& a : resize_interp_args()) s.args.push_back(a);
  s.args.push_back({"crop", ArgType::kFloatList,
                    "Window [height, width] of the resized image, for volumes [depth, height, "
                    "width] (not given: all of it).",
                    std::vector<double>{}, true});
  s.args.push_back({"crop_d", ArgType::kFloat,
                    "Window depth of a volume (with crop_h and crop_w; 0: all of it). Images "
                    "ignore it, as DALI's do.",
                    0.0, true});
  s.args.push_back(
      {"crop_h", ArgType::kFloat, "Window height (with crop_w; 0: all of it).", 0.0, true});
  s.args.push_back(
      {"crop_w", ArgType::kFloat, "Window width (with crop_h; 0: all of it).", 0.0, true});
  s.args.push_back({"crop_pos_x", ArgType::kFloat,
                    "Horizontal position in [0, 1]: x = round(pos * (W - crop_w)).", 0.5, true});
  s.args.push_back({"crop_pos_y", ArgType::kFloat,
                    "Vertical position in [0, 1]: y = round(pos * (H - crop_h)).", 0.5, true});
  s.args.push_back({"crop_pos_z", ArgType::kFloat,
                    "Depth position of a volume's window in [0, 1]: z = round(pos * (D - crop_d))."
                    " Images ignore it.",
                    0.5, true});
  s.args.push_back({"rounding", ArgType::kString,
                    "How the window's anchor becomes whole pixels: 'round' (half away from "
                    "zero) or 'truncate'.",
                    std::string("round")});
  s.args.push_back({"mirror", ArgType::kInt,
                    "Flips, a bit mask: 1 horizontal, 2 vertical, 4 depthwise (volumes; 0: "
                    "none).",
                    int64_t{0}, true});
  s.fusion.chain = FusionTraits::Chain::kStart;  // its region and filter feed a chain
  return s;
}

}  // namespace stoker::ops
