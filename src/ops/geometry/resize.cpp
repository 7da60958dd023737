// resize, experimental.resize and random_resized_crop (CPU; the GPU backends share the
// resampling kernel of resample_gpu_plan).
#include "stoker/ops/geometry/resize.hpp"

#include <cmath>

#include "stoker/kernels/resize/resample_weights.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/geometry/tensor_resample.hpp"
#include "stoker/ops/host_values.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Resize : public Operator {
 public:
  explicit Resize(const OpSpec& spec)
      : Operator(spec), args_(spec), save_attrs_(spec.arg<bool>("save_attrs")), resampler_(spec) {
    filter_ = parse_interp(spec, antialias_);
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
    } else {
      std::vector<TensorShape> shapes;
      auto rois = plan(ws, in, shapes);
      Batch& out = add_output(ws, resize_output_dtype(spec_, in.dtype()), std::move(shapes), "HWC");
      scratch_.ensure(ws.pool->num_threads());
      for_each_sample(ws, n, [&](int i, int thread) {
        const auto& s = in.shape(i);
        const auto& roi = rois[size_t(i)];
        resize_sample(in, i, 0, 0, s[0], s[1], out, filter_, antialias_, scratch_.get(thread),
                      roi ? &*roi : nullptr);
      });
    }
    add_attrs(ws, in);
  }

 protected:
  // Output shapes and regions of interest (none: the whole image) of every sample.
  std::vector<std::optional<kernels::ResizeRoi>> plan(Workspace& ws, const Batch& in,
                                                      std::vector<TensorShape>& shapes) const {
    const int n = in.size();
    shapes.assign(size_t(n), TensorShape{});
    std::vector<std::optional<kernels::ResizeRoi>> rois(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      auto p = args_.plan(*this, ws, in, i);
      shapes[size_t(i)] = std::move(p.shape);
      rois[size_t(i)] = p.roi;
    });
    return rois;
  }

  // A batch of volumes or channel-first images (spatial axes `axes`): every axis's extent and
  // region, per sample.
  TensorPlan volume_plan(Workspace& ws, const Batch& in, SpatialAxes axes) const {
    const int n = in.size();
    resampled_dtype(spec_, in.dtype());  // checked before anything is planned
    TensorPlan p;
    p.block = {axes.first, axes.count};
    p.in_shapes.resize(size_t(n));
    p.axes.resize(size_t(n));
    for_each_sample(ws, n, [&](int i, int) {
      p.axes[size_t(i)] = args_.volume_plan(*this, ws, in, i, axes);
      p.in_shapes[size_t(i)] = in.shape(i).dims();
    });
    return p;
  }

  // save_attrs: the second output, each sample's spatial extents (int32 [height, width] or
  // [depth, height, width]) before the resize, as DALI's.
  void add_attrs(Workspace& ws, const Batch& in) const {
    if (!save_attrs_) return;
    const auto axes = tensor_axes(in.layout()).value_or(SpatialAxes{0, 2});
    std::vector<int32_t> values;
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      for (int d = 0; d < axes.count; ++d) values.push_back(int32_t(in.shape(i)[axes.first + d]));
      shapes.push_back(TensorShape{axes.count});
    }
    Batch& attrs = add_output(ws, DType::kI32, std::move(shapes), "");
    copy_host_values(ws, attrs, values.data(), values.size() * sizeof(int32_t));
  }

  kernels::ResizeFilters filter_;
  bool antialias_ = true;
  ImageResizeArgs args_;
  bool save_attrs_ = false;
  TensorResampler resampler_;

 private:
  ResizeScratch scratch_;
};

class RandomResizedCrop : public Operator {
 public:
  explicit RandomResizedCrop(const OpSpec& spec) : Operator(spec) {
    filter_ = parse_interp(spec, antialias_);
    auto size = spec.arg<std::vector<int64_t>>("size");
    if (size.size() == 1) size.push_back(size[0]);
    STOKER_ENFORCE(size.size() == 2 && size[0] > 0 && size[1] > 0, ValueError,
                   "random_resized_crop: size must be [height, width] of positive values, got ",
                   format_arg_value(size));
    check_arg_elements("random_resized_crop", "size", size);
    out_h_ = size[0], out_w_ = size[1];
    area_ = spec.arg<std::vector<double>>("random_area");
    aspect_ = spec.arg<std::vector<double>>("random_aspect_ratio");
    if (aspect_.size() == 1) aspect_.push_back(aspect_[0]);
    STOKER_ENFORCE(area_.size() == 2 && area_[0] > 0 && area_[0] <= area_[1], ValueError,
                   "random_resized_crop: random_area must be [lo, hi] with 0 < lo <= hi");
    STOKER_ENFORCE(aspect_.size() == 2 && aspect_[0] > 0 && aspect_[0] <= aspect_[1], ValueError,
                   "random_resized_crop: random_aspect_ratio must be [lo, hi] with 0 < lo <= hi");
    // At most kMaxAttempts tries (more act as that many): impossible constraints end.
    attempts_ = int(std::min(spec.arg<int64_t>("num_attempts"), kMaxAttempts));
    STOKER_ENFORCE(attempts_ >= 1, ValueError, "random_resized_crop: num_attempts must be >= 1");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      shapes[size_t(i)] =
          TensorShape{out_h_, out_w_, image_shape(in, i, "random_resized_crop").channels};
    Batch& out = add_output(ws, resize_output_dtype(spec_, in.dtype()), std::move(shapes), "HWC");
    scratch_.ensure(ws.pool->num_threads());
    for_each_sample(ws, n, [&](int i, int thread) {
      auto win = window(ws, in, i);
      resize_sample(in, i, win.y, win.x, win.height, win.width, out, filter_, antialias_,
                    scratch_.get(thread));
    });
  }

 protected:
  CropWindow window(const Workspace& ws, const Batch& in, int i) const {
    const auto& s = in.shape(i);
    STOKER_ENFORCE(s[0] > 0 && s[1] > 0, ValueError, "random_resized_crop: empty image ",
                   s.to_string());
    auto rng = sample_rng(ws, i);
    return random_resized_crop_window(s[0], s[1], area_[0], area_[1], aspect_[0], aspect_[1],
                                      attempts_, rng);
  }

  kernels::ResizeFilters filter_;
  bool antialias_ = true;
  int64_t out_h_ = 0, out_w_ = 0;
  std::vector<double> area_, aspect_;
  int attempts_ = 10;
  ResizeScratch scratch_;
};

#ifdef STOKER_HAVE_CUDA
class ResizeGpu final : public Resize, public ResamplingStep {
 public:
  using Resize::Resize;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (auto axes = tensor_axes(in.layout())) {
      auto plan = volume_plan(ws, in, *axes);
      Batch& out =
          add_output(ws, resampled_dtype(spec_, in.dtype()), planned_shapes(plan), in.layout());
      resampler_.run_gpu(*this, ws, in, out, plan);
    } else {
      run_step(*this, *this, ws);
    }
    add_attrs(ws, in);
  }
  Output plan_step(Workspace& ws, const Batch& in) override {
    Output o;
    auto rois = plan(ws, in, o.shapes);
    check_uniform_channels(in, spec_.schema->name);
    o.plans.resize(rois.size());
    for (size_t i = 0; i < rois.size(); ++i) {
      const auto& s = in.shape(int(i));
      o.plans[i].roi = rois[i] ? *rois[i] : kernels::ResizeRoi{0, double(s[0]), 0, double(s[1])};
      o.plans[i].filter = filter_;
      o.plans[i].antialias = antialias_;
    }
    o.dtype = resize_output_dtype(spec_, in.dtype());
    o.layout = "HWC";
    o.params = identity_resample_params(in);
    return o;
  }
};

class RandomResizedCropGpu final : public RandomResizedCrop, public ResamplingStep {
 public:
  using RandomResizedCrop::RandomResizedCrop;
  void run(Workspace& ws) override { run_step(*this, *this, ws); }
  Output plan_step(Workspace& ws, const Batch& in) override {
    const int n = in.size();
    Output o;
    o.plans.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      o.shapes.push_back(
          TensorShape{out_h_, out_w_, image_shape(in, i, "random_resized_crop").channels});
      auto w = window(ws, in, i);
      auto& p = o.plans[size_t(i)];
      p.view = w;  // crop-then-resize, as the CPU kernel: the filter sees only the window
      p.roi = {0, double(w.height), 0, double(w.width)};
      p.filter = filter_;
      p.antialias = antialias_;
    }
    check_uniform_channels(in, "random_resized_crop");
    o.dtype = resize_output_dtype(spec_, in.dtype());
    o.layout = "HWC";
    o.params = identity_resample_params(in);
    return o;
  }
};
#endif

const char* kResizeDoc =
    "Resizes HWC images (uint8, uint16, int16 or float32). Pixel centres are at +0.5; output "
    "pixel i samples the input at (i + 0.5) * in / out with the interp_type filter (widened to "
    "the scale factor when downscaling with antialias, as PIL does); taps outside the "
    "image are dropped and weights renormalised. The intermediate pass stays in float "
    "(PIL clips it to 8 bits, so for uint8 cubic/lanczos upscales PIL differs where the "
    "lobes overshoot). Results are rounded half away from zero and saturated for uint8. "
    "Output size: `size` = [h, w] or resize_y/resize_x "
    "(a single one keeps the aspect ratio), or resize_shorter/resize_longer; `mode` "
    "and `max_size` as in DALI; extents are rounded half up. Channel-first images (CHW; "
    "FCHW and CFHW clips) are resized plane by plane. Volumes (DHWC, CDHW; FDHWC "
    "and FCDHW clips) are resized in depth too: `size` = [d, h, w] or "
    "resize_z/resize_y/resize_x, with the same rules (DALI's, in float32) and filters, "
    "each axis separably.";

}  // namespace

OpSchema resize_schema() {
  OpSchema s{
      .name = "resize",
      .doc = kResizeDoc,
      .inputs = {"images"},
      .outputs = {"resized"},
      .output_names =
          [](const OpSpec& spec) {
            return spec.arg<bool>("save_attrs") ? std::vector<std::string>{"resized", "attrs"}
                                                : std::vector<std::string>{"resized"};
          },
      .args = resize_size_args(),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Resize>(s); },
      .make_gpu = STOKER_GPU_FACTORY(ResizeGpu),
      .sequences = true,
      .per_sequence_outputs = {1},
      .example = OpExample{.args = {{"size", std::vector<double>{4, 4}}}},
  };
  for (auto& a : resize_interp_args()) s.args.push_back(a);
  s.args.push_back({"save_attrs", ArgType::kBool,
                    "Adds a second output: each sample's spatial extents before the resize "
                    "(int32 [height, width], or [depth, height, width] for volumes; one per "
                    "sequence), on the operator's device, as DALI's.",
                    false});
  s.fusion.chain = FusionTraits::Chain::kStart;  // its window and filter feed a chain
  // A fused chain has one output: the extents would be lost.
  s.fusion.fusable = [](const OpSpec& spec) { return !spec.arg<bool>("save_attrs"); };
  return s;
}

OpSchema experimental_resize_schema() {
  OpSchema s = resize_schema();
  s.name = "experimental.resize";
  s.doc = std::string(
              "DALI's second implementation of resize (its GPU backend runs CV-CUDA's HQResize, "
              "and it has no CPU backend); the same arguments and results: stoker runs its "
              "resize, on the CPU too. ") +
          kResizeDoc;
  return s;
}

OpSchema random_resized_crop_schema() {
  OpSchema s{
      .name = "random_resized_crop",
      .doc =
          "Crops a random window (area fraction uniform in `random_area`, aspect ratio "
          "log-uniform in `random_aspect_ratio`, up to `num_attempts` tries, else a centred "
          "crop; torchvision's algorithm) and resizes it to `size` with the conventions of "
          "`resize`. Only the window's pixels contribute (crop-then-resize).",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"size", ArgType::kIntList, "Output [height, width]."},
               {"random_area", ArgType::kFloatList, "Range of the window's area fraction.",
                std::vector<double>{0.08, 1.0}},
               {"random_aspect_ratio", ArgType::kFloatList, "Range of width/height.",
                std::vector<double>{3.0 / 4.0, 4.0 / 3.0}},
               {"num_attempts", ArgType::kInt, "Tries before the centred fallback.", int64_t{10}}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<RandomResizedCrop>(s); },
      .make_gpu = STOKER_GPU_FACTORY(RandomResizedCropGpu),
      .sequences = true,
      .example = OpExample{.args = {{"size", std::vector<int64_t>{4, 4}}}},
  };
  for (auto& a : resize_interp_args()) s.args.push_back(a);
  s.fusion.chain = FusionTraits::Chain::kStart;  // its window and filter feed a chain
  return s;
}

}  // namespace stoker::ops
