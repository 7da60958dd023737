// crop and flip (CPU).
#include "stoker/ops/geometry/crop_flip.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stoker/kernels/geometry/crop_cpu.hpp"
#include "stoker/kernels/geometry/flip_cpu.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"
#include "stoker/ops/geometry/crop_args.hpp"
#include "stoker/ops/geometry/crop_nd.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/tensor/slice_dtype.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#endif

namespace stoker::ops {
namespace {

class Crop : public Operator {
 public:
  explicit Crop(const OpSpec& spec) : Operator(spec) {
    const auto policy = spec.arg<std::string>("out_of_bounds_policy");
    // DALI's names (slice's): trim_to_shape, pad or constant, and its border modes.
    policy_ = policy == "constant" ? "pad" : policy;
    border_ = policy_ == "edge" || policy_ == "clamp"              ? kernels::Border::kClamp
              : policy_ == "reflect" || policy_ == "reflect_1001" ? kernels::Border::kReflect1001
              : policy_ == "reflect_101"                          ? kernels::Border::kReflect101
              : policy_ == "wrap"                                 ? kernels::Border::kWrap
                                                                  : kernels::Border::kFill;
    STOKER_ENFORCE(policy_ == "error" || policy_ == "pad" || policy_ == "trim_to_shape" ||
                       border_ != kernels::Border::kFill,
                   ValueError,
                   "crop: out_of_bounds_policy must be 'error', 'pad' (or 'constant'), "
                   "'trim_to_shape', 'edge' (or 'clamp'), 'reflect' (or 'reflect_1001'), "
                   "'reflect_101' or 'wrap', got '",
                   policy, "'");
    fill_ = spec.arg<std::vector<double>>("fill_values");
    dtype_ = slice_dtype_arg(spec);
  }

  void run(Workspace& ws) override {
    run_converted(*this, ws, dtype_, [&] { cut(ws); });
  }

 protected:
  // The cut, of the input converted to `dtype` when it asks for another type.
  virtual void cut(Workspace& ws) {
    const Batch& in = ws.input(0);
    if (!plain_image(in)) return run_strided(ws, nullptr);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto windows = plan(ws, in, shapes);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), "HWC");
    for_each_sample(ws, n, [&](int i, int) {
      const auto s = frame_of(in, i);
      const auto& w = windows[size_t(i)];
      visit_crop_type(in.dtype(), "crop input", [&](auto tag) {
        using T = typename decltype(tag)::type;
        kernels::crop_cpu<T>(
            {out.data_as<T>(i), w.height, w.width, s.channels, w.width * s.channels},
            {in.data_as<const T>(i), s.height, s.width, s.channels, s.width * s.channels}, w.y,
            w.x, fill_of<T>(s.channels));
      });
    });
  }

 protected:
  // The window of every sample (after out_of_bounds_policy) and the output shapes.
  std::vector<CropWindow> plan(Workspace& ws, const Batch& in,
                               std::vector<TensorShape>& shapes) const {
    const int n = in.size();
    std::vector<CropWindow> windows(static_cast<size_t>(n));
    shapes.assign(size_t(n), TensorShape{});
    for_each_sample(ws, n, [&](int i, int) {
      auto s = frame_of(in, i);
      auto w = crop_window_arg(*this, ws, i, s.height, s.width);
      if (policy_ == "error") check_window_inside(w, s.height, s.width, "crop");
      if (policy_ == "trim_to_shape") {
        int64_t y1 = std::min(w.y + w.height, s.height), x1 = std::min(w.x + w.width, s.width);
        w.y = std::max<int64_t>(w.y, 0), w.x = std::max<int64_t>(w.x, 0);
        w.height = std::max<int64_t>(0, y1 - w.y), w.width = std::max<int64_t>(0, x1 - w.x);
      }
      check_fill_count(s.channels);
      windows[size_t(i)] = w;
      shapes[size_t(i)] = TensorShape{w.height, w.width, s.channels};
    });
    return windows;
  }

  // HWC images (or 3-D without a layout) cut with error, pad or trim_to_shape: the image
  // kernel (and the GPU's fused chains); everything else goes through strided copies.
  bool plain_image(const Batch& in) const {
    const auto& l = in.layout().str();
    const bool hwc = l == "HWC" || (l.empty() && in.sample_ndim() == 3);
    return hwc && border_ == kernels::Border::kFill;
  }

  // Any layout crop takes (kLayouts), any policy: one strided copy per sample (or per channel
  // with differing fill values). With `copies`, the descriptors are gathered (GPU) instead of
  // run here.
  void run_strided(Workspace& ws, std::vector<kernels::StridedCopy>* copies) {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const size_t elem = dtype_size(in.dtype());
    visit_crop_type(in.dtype(), "crop input", [](auto) {});
    std::string layout = in.layout().str();
    LayoutAxes ax;  // one layout and one rank for the batch
    if (n > 0) ax = layout_axes(layout, in.sample_ndim(), kLayouts, "crop", &layout);
    std::vector<CropBox> boxes(static_cast<size_t>(n));
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    // Per sample, so that a bad one is skipped under on_error="skip" and named otherwise.
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      CropBox b = crop_box_arg(*this, ws, i, ax.volume() ? s[ax.d] : -1, s[ax.h], s[ax.w]);
      bound_box(b, {ax.volume() ? s[ax.d] : 1, s[ax.h], s[ax.w]}, policy_, "crop");
      check_fill_count(ax.c >= 0 ? s[ax.c] : 1);
      boxes[size_t(i)] = b;
      shapes[size_t(i)] = cropped_shape(s, ax, b);
    });
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), layout);
    auto copies_of = [&](int i) {
      const auto fill = fill_bits(in.dtype(), ax.c >= 0 ? in.shape(i)[ax.c] : 1);
      return crop_copies(in.data(i), out.data(i), in.shape(i), ax, boxes[size_t(i)], border_,
                         fill, elem);
    };
    if (!copies) {
      for_each_sample(ws, n, [&](int i, int) {
        for (const auto& d : copies_of(i)) kernels::strided_copy_cpu(d, elem);
      });
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (ws.failures && ws.failures->contains(i)) continue;
      const auto d = copies_of(i);
      copies->insert(copies->end(), d.begin(), d.end());
    }
  }
  // DALI's rule: one fill value for every channel, or exactly one per channel.
  void check_fill_count(int64_t channels) const {
    STOKER_ENFORCE(fill_.size() == 1 || int64_t(fill_.size()) == channels, ValueError,
                   "crop: fill_values needs 1 or ", channels, " values (one per channel), got ",
                   fill_.size());
  }
  // Sequences with F first come frame by frame (SequenceOperator); CFHW clips whole, every
  // frame cut alike (the F axis is not cut).
  inline static const std::vector<std::string> kLayouts = {"HWC", "CHW", "DHWC", "CDHW", "CFHW"};
  static ImageShape frame_of(const Batch& in, int i) {
    const auto& s = in.shape(i);
    STOKER_ENFORCE(s.ndim() == 3, ValueError, "crop: expected images (3 dimensions), got shape ",
                   s.to_string());
    return ImageShape{s[0], s[1], s[2]};
  }
  // fill_values per channel as T.
  template <typename T>
  std::vector<T> fill_of(int64_t channels) const {
    std::vector<T> fill(static_cast<size_t>(channels));
    for (size_t c = 0; c < fill.size(); ++c)
      fill[c] = fill_cast<T>(fill_[fill_.size() == 1 ? 0 : c]);
    return fill;
  }
  // The same as the bits of `dtype`'s elements (the GPU copies' fill).
  std::vector<uint64_t> fill_bits(DType dtype, int64_t channels) const {
    std::vector<uint64_t> bits(static_cast<size_t>(channels));
    visit_crop_type(dtype, "crop input", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto fill = fill_of<T>(channels);
      for (size_t c = 0; c < bits.size(); ++c) std::memcpy(&bits[c], &fill[c], sizeof(T));
    });
    return bits;
  }
  // Every element type crop takes.
  template <typename F>
  static void visit_crop_type(DType d, const char* what, F&& f) {
    visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                DType::kU64, DType::kI64, DType::kF16, DType::kF32, DType::kF64>(
        d, what, std::forward<F>(f));
  }

  std::string policy_;
  kernels::Border border_ = kernels::Border::kFill;
  std::vector<double> fill_;
  std::optional<DType> dtype_;
};

// Flips reinterpret the data as same-sized unsigned integers: the bytes move, values do not.
template <typename F>
void visit_by_size(DType d, F&& f) {
  switch (dtype_size(d)) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    case 8:
      return f(TypeTag<uint64_t>{});
  }
  STOKER_ASSERT(false, "element size ", dtype_size(d));
}

class Flip : public Operator {
 public:
  using Operator::Operator;

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const std::string layout = checked_layout(in);
    if (layout == "DHWC" || layout == "CDHW" || layout == "FHWC") {
      Batch& out = add_output(ws, in.dtype(), shapes_of(in), in.layout().str());
      const auto copies = volume_copies(ws, in, out, layout);
      for_each_sample(ws, n, [&](int i, int) {
        kernels::strided_copy_cpu(copies[size_t(i)], dtype_size(in.dtype()));
      });
      return;
    }
    Batch& out = add_output(ws, in.dtype(), shapes_of(in), layout);
    for_each_sample(ws, n, [&](int i, int) {
      bool h = scalar_arg(ws, "horizontal", i) != 0, v = scalar_arg(ws, "vertical", i) != 0;
      const auto& s = in.shape(i);
      visit_by_size(in.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* src = static_cast<const T*>(in.data(i));
        T* dst = static_cast<T*>(out.data(i));
        if (layout == "HWC") {
          kernels::flip_cpu<T>(kernels::dense_image(dst, s[0], s[1], s[2]),
                               kernels::dense_image(src, s[0], s[1], s[2]), h, v);
        } else {  // CHW: each plane is a one-channel image
          int64_t plane = s[1] * s[2];
          for (int64_t c = 0; c < s[0]; ++c)
            kernels::flip_cpu<T>(kernels::dense_image(dst + c * plane, s[1], s[2], int64_t(1)),
                                 kernels::dense_image(src + c * plane, s[1], s[2], int64_t(1)), h,
                                 v);
        }
      });
    });
  }

 protected:
  // HWC, CHW, DHWC or CDHW (sequences: frame by frame). Without a layout 3 dimensions are HWC
  // and 4 a sequence of HWC frames (DALI's reading), flipped alike.
  static std::string checked_layout(const Batch& in) {
    std::string layout = in.layout().str();
    if (layout.empty()) layout = in.sample_ndim() == 4 ? "FHWC" : "HWC";
    STOKER_ENFORCE(layout == "HWC" || layout == "CHW" || layout == "DHWC" || layout == "CDHW" ||
                       (layout == "FHWC" && in.layout().empty()),
                   ValueError, "flip: expected layout HWC, CHW, DHWC or CDHW (sequences: F first), got '",
                   layout, "'");
    return layout;
  }
  static std::vector<TensorShape> shapes_of(const Batch& in) {
    std::vector<TensorShape> shapes;
    const int ndim = in.layout().empty() ? in.sample_ndim() : int(in.layout().str().size());
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == ndim && (ndim == 3 || ndim == 4), ValueError,
                     "flip: sample ", i, " has shape ", in.shape(i).to_string(), " for layout '",
                     in.layout().str(), "'");
      shapes.push_back(in.shape(i));
    }
    return shapes;
  }
  // Volumes (and 4-D samples without a layout, as FHWC: depthwise does nothing there, as in
  // DALI): one mirrored strided copy per sample.
  std::vector<kernels::StridedCopy> volume_copies(const Workspace& ws, const Batch& in, Batch& out,
                                                  const std::string& layout) const {
    LayoutAxes ax;
    ax.d = int(layout.find('D')), ax.h = int(layout.find('H')), ax.w = int(layout.find('W'));
    ax.c = int(layout.find('C'));
    std::vector<kernels::StridedCopy> copies;
    for (int i = 0; i < in.size(); ++i)
      copies.push_back(flip_copy(in.data(i), out.data(i), in.shape(i), ax,
                                 scalar_arg(ws, "depthwise", i) != 0,
                                 scalar_arg(ws, "vertical", i) != 0,
                                 scalar_arg(ws, "horizontal", i) != 0, dtype_size(in.dtype())));
    return copies;
  }
};

#ifdef STOKER_HAVE_CUDA
class CropGpu final : public Crop, public ResamplingStep {
 public:
  using Crop::Crop;
  void cut(Workspace& ws) override {
    if (plain_image(ws.input(0)) && step_type(ws.input(0).dtype()))
      return run_step(*this, *this, ws);
    // Volumes, CHW, border modes, element types the resampler lacks: the CPU's strided copies,
    // in one launch.
    std::vector<kernels::StridedCopy> d;
    run_strided(ws, &d);
    run_copies(*this, ws, d, dtype_size(ws.input(0).dtype()));
  }
  // The element types the resampling kernels (and so fused chains) take.
  static bool step_type(DType t) {
    return t == DType::kU8 || t == DType::kI16 || t == DType::kU16 || t == DType::kF32;
  }
  Output plan_step(Workspace& ws, const Batch& in) override {
    STOKER_ENFORCE(plain_image(in), ValueError,
                   "crop (gpu): fused chains need HWC images cut with out_of_bounds_policy "
                   "'error' or 'trim_to_shape'");
    Output o;
    auto windows = plan(ws, in, o.shapes);
    o.dtype = in.dtype();
    o.layout = "HWC";
    if (in.size() == 0) return o;
    const DType t = in.dtype();
    STOKER_ENFORCE(step_type(t), TypeError, "crop (gpu): ", dtype_name(t),
                   " images cannot join a fused chain on the GPU (uint8, int16, uint16, "
                   "float32 can)");
    auto& p = o.params;
    p.channels = p.out_channels = int32_t(in.shape(0)[2]);
    for (int i = 1; i < in.size(); ++i)
      STOKER_ENFORCE(in.shape(i)[2] == p.channels, ValueError,
                     "crop (gpu): every sample needs the same channel count");
    for (int c = 0; c < kernels::kResampleMaxChannels; ++c) {
      p.inv_std[c] = 1.f;
      // Truncated for integer images as the CPU's fill_cast (the kernel rounds what it stores).
      const double f = fill_[fill_.size() == 1 ? 0 : std::min<size_t>(c, fill_.size() - 1)];
      p.fill[c] = float(t == DType::kF32 ? f : std::trunc(f));
    }
    o.plans.resize(windows.size());
    for (size_t i = 0; i < windows.size(); ++i) {
      o.plans[i].copy = true;
      o.plans[i].copy_y = windows[i].y, o.plans[i].copy_x = windows[i].x;
    }
    return o;
  }
};

class FlipGpu final : public Flip, public ResamplingStep {
 public:
  using Flip::Flip;
  // As a step of a fused resampling chain (HWC): the whole image, mirrored per sample.
  Output plan_step(Workspace& ws, const Batch& in) override {
    Output o;
    o.shapes = shapes_of(in);
    o.dtype = in.dtype();
    o.layout = checked_layout(in);
    STOKER_ENFORCE(o.layout == "HWC", ValueError, "flip (gpu): fused chains need HWC images");
    o.plans.resize(size_t(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      auto& pl = o.plans[size_t(i)];
      pl.copy = true;
      pl.mirror_x = scalar_arg(ws, "horizontal", i) != 0;
      pl.mirror_y = scalar_arg(ws, "vertical", i) != 0;
    }
    if (in.size() > 0) o.params.channels = o.params.out_channels = int32_t(in.shape(0)[2]);
    return o;
  }
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const std::string layout = checked_layout(in);
    if (layout == "DHWC" || layout == "CDHW" || layout == "FHWC") {
      Batch& out = add_output(ws, in.dtype(), shapes_of(in), in.layout().str());
      run_copies(*this, ws, volume_copies(ws, in, out, layout), dtype_size(in.dtype()));
      return;
    }
    Batch& out = add_output(ws, in.dtype(), shapes_of(in), layout);
    if (n == 0) return;
    std::vector<kernels::FlipGpuSample> desc(static_cast<size_t>(n));
    int64_t sum_pixels = 0, max_elements = 0;
    bool three = true;
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i);
      if (layout == "HWC")
        d.planes = 1, d.h = s[0], d.w = s[1], d.channels = s[2];
      else
        d.planes = s[0], d.h = s[1], d.w = s[2], d.channels = 1;
      d.horizontal = scalar_arg(ws, "horizontal", i) != 0;
      d.vertical = scalar_arg(ws, "vertical", i) != 0;
      sum_pixels += d.planes * d.h * d.w;
      max_elements = std::max(max_elements, d.planes * d.h * d.w * d.channels);
      three = three && d.channels == 3;
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::flip_gpu(static_cast<const kernels::FlipGpuSample*>(device->data()), n,
                                 (sum_pixels + n - 1) / n, max_elements, three,
                                 int(dtype_size(in.dtype())), ws.stream),
               "flip (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema crop_schema() {
  OpSchema s{
      .name = "crop",
      .doc =
          "Cuts a window out of images (HWC, CHW) or volumes (DHWC, CDHW), and sequences of "
          "them (F first, or CFHW; each frame cut alike); no layout: HWC for 3 dimensions, DHWC "
          "for 4 "
          "(none given: the whole input, as DALI's). Window placement: see crop_pos_x/y/z and "
          "rounding. out_of_bounds_policy: 'error' (default) rejects windows leaving the "
          "input, 'pad' (or 'constant') fills outside elements with `fill_values` (one, or one "
          "per channel), 'trim_to_shape' shrinks the window to the input; 'edge' ('clamp'), "
          "'reflect' ('reflect_1001'), 'reflect_101' and 'wrap' read outside elements from "
          "inside as slice does.",
      .inputs = {"images"},
      .outputs = {"cropped"},
      .args = {{"out_of_bounds_policy", ArgType::kString,
                "error | pad (constant) | trim_to_shape | edge (clamp) | reflect (reflect_1001) | "
                "reflect_101 | wrap.",
                std::string("error")},
               {"fill_values", ArgType::kFloatList, "Padding value(s), one or per channel.",
                std::vector<double>{0.0}},
               optional_arg("dtype", ArgType::kDType,
                            "The output's type: float32, float16, uint8 or the input's (the "
                            "default); into uint8 toward zero and saturated, as DALI's.",
                            false)},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Crop>(sp); },
      .make_gpu = STOKER_GPU_FACTORY(CropGpu),
      .sequences = true,
      .example = OpExample{.args = {{"crop", std::vector<double>{2, 2}}}},
  };
  for (auto& a : crop_arg_schemas()) s.args.push_back(a);
  s.fusion.chain = FusionTraits::Chain::kMiddle;
  s.fusion.fusable = [](const OpSpec& sp) {  // a padding crop writes pixels the chain has not
    const auto p = sp.arg<std::string>("out_of_bounds_policy");
    return (p == "error" || p == "trim_to_shape") && !sp.has_arg("dtype");
  };
  return s;
}

OpSchema flip_schema() {
  return {
      .name = "flip",
      .doc = "Flips images (HWC, CHW) or volumes (DHWC, CDHW) horizontally, vertically and/or "
             "(volumes) in depth, per sample; sequences (F first) frame by frame. Without a "
             "layout, 3 dimensions are HWC and 4 a sequence of HWC frames (as DALI reads them).",
      .inputs = {"images"},
      .outputs = {"flipped"},
      .args = {{"horizontal", ArgType::kInt, "Flip left-right when non-zero.", int64_t{1}, true},
               {"vertical", ArgType::kInt, "Flip top-bottom when non-zero.", int64_t{0}, true},
               {"depthwise", ArgType::kInt,
                "Flip front-back (the D axis of volumes) when non-zero; images have none.",
                int64_t{0}, true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Flip>(s); },
      .make_gpu = STOKER_GPU_FACTORY(FlipGpu),
      .fusion = {.chain = FusionTraits::Chain::kMiddle, .mirror = true},
      .sequences = true,
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
