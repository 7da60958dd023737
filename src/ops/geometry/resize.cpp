// resize and random_resized_crop (CPU).
#include <cmath>
#include <mutex>
#include <optional>

#include "stoker/kernels/resize/resample_weights.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/resize.hpp"
#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// The filters of interp_type, min_filter and mag_filter (DALI's: the last two, when given,
// replace interp_type's filter for the axes that shrink and for the others); `antialias` comes
// in from the argument (triangular is linear).
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

// Per-thread float scratch for the separable passes, grown to the high-water mark.
class ScratchSet {
 public:
  std::vector<float>& get(int thread) { return scratch_[size_t(thread)]; }
  void ensure(int threads) {
    if (int(scratch_.size()) < threads) scratch_.resize(size_t(threads));
  }

 private:
  std::vector<std::vector<float>> scratch_;
};

DType output_dtype(const OpSpec& spec, DType input) {
  return spec.has_arg("dtype") ? dtype_from_name(spec.arg<std::string>("dtype")) : input;
}

class Resize : public Operator {
 public:
  explicit Resize(const OpSpec& spec) : Operator(spec) {
    filter_ = parse_interp(spec, antialias_);
    mode_ = spec.arg<std::string>("mode");
    subpixel_scale_ = spec.arg<bool>("subpixel_scale");
    STOKER_ENFORCE(
        mode_ == "default" || mode_ == "stretch" || mode_ == "not_larger" || mode_ == "not_smaller",
        ValueError, "resize: unknown mode '", mode_,
        "'; expected default, stretch, not_larger or not_smaller");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto rois = plan(ws, in, shapes);
    Batch& out = add_output(ws, output_dtype(spec_, in.dtype()), std::move(shapes), "HWC");
    scratch_.ensure(ws.pool->num_threads());
    for_each_sample(ws, n, [&](int i, int thread) {
      const auto& s = in.shape(i);
      const auto& roi = rois[size_t(i)];
      resize_sample(in, i, 0, 0, s[0], s[1], out, filter_, antialias_, scratch_.get(thread),
                    roi ? &*roi : nullptr);
    });
  }

 protected:
  // Output shapes and regions of interest (none: the whole image) of every sample.
  std::vector<std::optional<kernels::ResizeRoi>> plan(Workspace& ws, const Batch& in,
                                                      std::vector<TensorShape>& shapes) const {
    const int n = in.size();
    shapes.assign(size_t(n), TensorShape{});
    std::vector<std::optional<kernels::ResizeRoi>> rois(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, "resize");
      auto& roi = rois[size_t(i)];
      roi = region_of_interest(ws, i, s.height, s.width);
      ResizeRequest r;
      r.mode = mode_;
      r.resize_x = scalar_arg(ws, "resize_x", i);
      r.resize_y = scalar_arg(ws, "resize_y", i);
      r.shorter = scalar_arg(ws, "resize_shorter", i);
      r.longer = scalar_arg(ws, "resize_longer", i);
      auto size = list_arg(ws, "size", i);
      STOKER_ENFORCE(size.size() <= 2, ValueError,
                     "resize: size must be [height, width] (or one value for both), got ",
                     size.size(), " values");
      if (size.size() == 1) r.resize_y = r.resize_x = size[0];
      if (size.size() == 2) r.resize_y = size[0], r.resize_x = size[1];
      auto max_size = list_arg(ws, "max_size", i);
      if (max_size.size() == 1) r.max_h = r.max_w = max_size[0];
      if (max_size.size() == 2) r.max_h = max_size[0], r.max_w = max_size[1];
      const double in_h = roi ? std::fabs(roi->y1 - roi->y0) : double(s.height);
      const double in_w = roi ? std::fabs(roi->x1 - roi->x0) : double(s.width);
      // Bounded before the sizes are rounded to integers (arg_limits.hpp).
      const auto [want_h, want_w] = resize_exact_size(in_h, in_w, r);
      check_arg_elements("resize", "resize_x, resize_y, size, resize_shorter and resize_longer",
                         std::vector<double>{want_h, want_w}, i,
                         double(s.height) * double(s.width));
      auto [h, w] = resize_output_size(in_h, in_w, r);
      shapes[size_t(i)] = TensorShape{h, w, s.channels};
      if (subpixel_scale_) {
        // DALI's subpixel_scale: a fractional size (46.5) keeps its scale factor; the rounded
        // output (47) samples a slightly larger region about the same centre.
        auto [eh, ew] = resize_exact_size(in_h, in_w, r);
        if (double(h) != eh || double(w) != ew) {
          kernels::ResizeRoi full{0, double(s.height), 0, double(s.width)};
          auto& g = roi ? *roi : full;
          const auto widen = [](double& lo, double& hi, double k) {
            const double c = (lo + hi) / 2, half = (hi - lo) / 2 * k;
            lo = c - half, hi = c + half;
          };
          widen(g.y0, g.y1, double(h) / eh);
          widen(g.x0, g.x1, double(w) / ew);
          roi = g;
        }
      }
    });
    return rois;
  }

  kernels::ResizeFilters filter_;
  bool antialias_ = true;

 private:
  // roi_start/roi_end ([y, x], pixels or with roi_relative fractions of the extents), or none.
  std::optional<kernels::ResizeRoi> region_of_interest(const Workspace& ws, int i, int64_t h,
                                                       int64_t w) const {
    auto start = list_arg(ws, "roi_start", i), end = list_arg(ws, "roi_end", i);
    if (start.empty() && end.empty()) return std::nullopt;
    STOKER_ENFORCE(start.size() == 2 && end.size() == 2, ValueError,
                   "resize: roi_start and roi_end need 2 values each ([y, x]), got ", start.size(),
                   " and ", end.size());
    if (spec_.arg<bool>("roi_relative")) {
      start[0] *= double(h), end[0] *= double(h);
      start[1] *= double(w), end[1] *= double(w);
    }
    STOKER_ENFORCE(start[0] != end[0] && start[1] != end[1], ValueError,
                   "resize: the region of interest of sample ", i, " is empty (roi_start [",
                   start[0], ", ", start[1], "], roi_end [", end[0], ", ", end[1], "])");
    return kernels::ResizeRoi{start[0], end[0], start[1], end[1]};
  }

  std::string mode_;
  bool subpixel_scale_ = true;
  ScratchSet scratch_;
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
    Batch& out = add_output(ws, output_dtype(spec_, in.dtype()), std::move(shapes), "HWC");
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
  ScratchSet scratch_;
};

#ifdef STOKER_HAVE_CUDA
kernels::ResampleGpuParams identity_params(const Batch& in) {
  kernels::ResampleGpuParams p;
  p.channels = p.out_channels = in.size() ? int32_t(in.shape(0)[2]) : 0;
  for (int c = 0; c < kernels::kResampleMaxChannels; ++c) p.inv_std[c] = 1.f;
  return p;
}

void check_channels(const Batch& in, const std::string& op) {
  for (int i = 1; i < in.size(); ++i)
    STOKER_ENFORCE(in.shape(i)[2] == in.shape(0)[2], ValueError, op,
                   " (gpu): every sample needs the same channel count; sample 0 has ",
                   in.shape(0)[2], ", sample ", i, " has ", in.shape(i)[2]);
}

class ResizeGpu final : public Resize, public ResamplingStep {
 public:
  using Resize::Resize;
  void run(Workspace& ws) override { run_step(*this, *this, ws); }
  Output plan_step(Workspace& ws, const Batch& in) override {
    Output o;
    auto rois = plan(ws, in, o.shapes);
    check_channels(in, "resize");
    o.plans.resize(rois.size());
    for (size_t i = 0; i < rois.size(); ++i) {
      const auto& s = in.shape(int(i));
      o.plans[i].roi = rois[i] ? *rois[i] : kernels::ResizeRoi{0, double(s[0]), 0, double(s[1])};
      o.plans[i].filter = filter_;
      o.plans[i].antialias = antialias_;
    }
    o.dtype = output_dtype(spec_, in.dtype());
    o.layout = "HWC";
    o.params = identity_params(in);
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
    check_channels(in, "random_resized_crop");
    o.dtype = output_dtype(spec_, in.dtype());
    o.layout = "HWC";
    o.params = identity_params(in);
    return o;
  }
};
#endif

std::vector<ArgSchema> interp_args() {
  return {{"interp_type", ArgType::kString,
           "Filter: 'nn' (nearest: the pixel under the sample position), 'linear' (triangle, "
           "radius 1), 'triangular' (linear, as in DALI), 'cubic' (Keys, a = -0.5, as "
           "PIL's BICUBIC), 'lanczos3' (as PIL's LANCZOS) or 'gaussian' (sigma 0.5, radius "
           "1.5); DALI's INTERP_* names too.",
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
          {"dtype", ArgType::kDType, "Output dtype (uint8, uint16, int16 or float32; default: the input's).",
           std::nullopt, false, true}};
}

}  // namespace

OpSchema resize_schema() {
  OpSchema s{
      .name = "resize",
      .doc =
          "Resizes HWC images (uint8, uint16, int16 or float32). Pixel centres are at +0.5; output pixel i "
          "samples the input at (i + 0.5) * in / out with the interp_type filter (widened to "
          "the scale factor when downscaling with antialias, as PIL does); taps outside the "
          "image are dropped and weights renormalised. The intermediate pass stays in float "
          "(PIL clips it to 8 bits, so for uint8 cubic/lanczos upscales PIL differs where the "
          "lobes overshoot). Results are rounded half away from zero and saturated for uint8. "
          "Output size: `size` = [h, w] or resize_y/resize_x "
          "(a single one keeps the aspect ratio), or resize_shorter/resize_longer; `mode` "
          "and `max_size` as in DALI; extents are rounded half up.",
      .inputs = {"images"},
      .outputs = {"resized"},
      .args = {{"resize_x", ArgType::kFloat, "Output width (0: derived).", 0.0, true},
               {"resize_y", ArgType::kFloat, "Output height (0: derived).", 0.0, true},
               {"size", ArgType::kFloatList,
                "[height, width] (one value: both); 0 entries are derived.", std::vector<double>{},
                true},
               {"resize_shorter", ArgType::kFloat, "Length of the shorter side.", 0.0, true},
               {"resize_longer", ArgType::kFloat, "Length of the longer side.", 0.0, true},
               {"max_size", ArgType::kFloatList,
                "Upper limit of [height, width] (or one value "
                "for both).",
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
                "Start [y, x] of the region of interest (with roi_end): the region is "
                "resampled to the output, its extent |end - start| standing for the input's "
                "in the size rules; fractional coordinates allowed, start > end flips that "
                "axis; the filter may read pixels around the region (it is a sampling grid, "
                "not a crop).",
                std::vector<double>{}, true},
               {"roi_end", ArgType::kFloatList, "End [y, x] of the region of interest.",
                std::vector<double>{}, true},
               {"roi_relative", ArgType::kBool,
                "roi_start/roi_end as fractions of the extents instead of pixels.", false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Resize>(s); },
      .make_gpu = STOKER_GPU_FACTORY(ResizeGpu),
      .sequences = true,
      .example = OpExample{.args = {{"size", std::vector<double>{4, 4}}}},
  };
  for (auto& a : interp_args()) s.args.push_back(a);
  s.fusion.chain = FusionTraits::Chain::kStart;  // its window and filter feed a chain
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
  for (auto& a : interp_args()) s.args.push_back(a);
  s.fusion.chain = FusionTraits::Chain::kStart;  // its window and filter feed a chain
  return s;
}

}  // namespace stoker::ops
