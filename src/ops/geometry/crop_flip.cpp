// crop and flip (CPU).
#include "stoker/ops/geometry/crop_flip.hpp"

#include <algorithm>
#include <cstring>

#include "stoker/kernels/geometry/crop_cpu.hpp"
#include "stoker/kernels/geometry/flip_cpu.hpp"
#include "stoker/ops/geometry/crop_args.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#endif

namespace stoker::ops {
namespace {

class Crop : public Operator {
 public:
  explicit Crop(const OpSpec& spec) : Operator(spec) {
    policy_ = spec.arg<std::string>("out_of_bounds_policy");
    STOKER_ENFORCE(policy_ == "error" || policy_ == "pad" || policy_ == "trim", ValueError,
                   "crop: out_of_bounds_policy must be 'error', 'pad' or 'trim', got '", policy_,
                   "'");
    fill_ = spec.arg<std::vector<double>>("fill_values");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto windows = plan(ws, in, shapes);
    const bool planar = is_planar(in);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), planar ? "CHW" : "HWC");
    for_each_sample(ws, n, [&](int i, int) {
      const auto s = frame_of(in, i);
      const auto& w = windows[size_t(i)];
      visit_crop_type(in.dtype(), "crop input", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto fill = fill_of<T>(s.channels);
        const T* src = in.data_as<const T>(i);
        T* dst = out.data_as<T>(i);
        if (!planar) {
          kernels::crop_cpu<T>({dst, w.height, w.width, s.channels, w.width * s.channels},
                               {src, s.height, s.width, s.channels, s.width * s.channels}, w.y, w.x,
                               fill);
          return;
        }
        for (int64_t c = 0; c < s.channels; ++c)  // CHW: each plane a one-channel image
          kernels::crop_cpu<T>({dst + c * w.height * w.width, w.height, w.width, 1, w.width},
                               {src + c * s.height * s.width, s.height, s.width, 1, s.width}, w.y,
                               w.x, std::vector<T>{fill[size_t(c)]});
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
    const bool planar = is_planar(in);
    for_each_sample(ws, n, [&](int i, int) {
      auto s = frame_of(in, i);
      auto w = crop_window_arg(*this, ws, i, s.height, s.width);
      if (policy_ == "error") check_window_inside(w, s.height, s.width, "crop");
      if (policy_ == "trim") {
        int64_t y1 = std::min(w.y + w.height, s.height), x1 = std::min(w.x + w.width, s.width);
        w.y = std::max<int64_t>(w.y, 0), w.x = std::max<int64_t>(w.x, 0);
        w.height = std::max<int64_t>(0, y1 - w.y), w.width = std::max<int64_t>(0, x1 - w.x);
      }
      STOKER_ENFORCE(fill_.size() == 1 || int64_t(fill_.size()) >= s.channels, ValueError,
                     "crop: fill_values needs 1 or ", s.channels, " values, got ", fill_.size());
      windows[size_t(i)] = w;
      shapes[size_t(i)] = planar ? TensorShape{s.channels, w.height, w.width}
                                 : TensorShape{w.height, w.width, s.channels};
    });
    return windows;
  }

  // HWC (or no layout) or CHW images.
  static bool is_planar(const Batch& in) {
    const auto& l = in.layout().str();
    STOKER_ENFORCE(l.empty() || l == "HWC" || l == "CHW", ValueError,
                   "crop: expected images in HWC or CHW layout (sequences: FHWC, FCHW), got '", l,
                   "'");
    return l == "CHW";
  }
  static ImageShape frame_of(const Batch& in, int i) {
    const auto& s = in.shape(i);
    STOKER_ENFORCE(s.ndim() == 3, ValueError, "crop: expected images (3 dimensions), got shape ",
                   s.to_string());
    return is_planar(in) ? ImageShape{s[1], s[2], s[0]} : ImageShape{s[0], s[1], s[2]};
  }
  // fill_values per channel as T.
  template <typename T>
  std::vector<T> fill_of(int64_t channels) const {
    std::vector<T> fill(static_cast<size_t>(channels));
    for (size_t c = 0; c < fill.size(); ++c)
      fill[c] = convert_sat<T>(float(fill_[fill_.size() == 1 ? 0 : c]));
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
                DType::kU64, DType::kI64, DType::kF32, DType::kF64>(d, what, std::forward<F>(f));
  }

  std::string policy_;
  std::vector<double> fill_;
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
  static std::string checked_layout(const Batch& in) {
    std::string layout = in.layout().empty() ? "HWC" : in.layout().str();
    STOKER_ENFORCE(layout == "HWC" || layout == "CHW", ValueError,
                   "flip: expected layout HWC or CHW, got '", layout, "'");
    return layout;
  }
  static std::vector<TensorShape> shapes_of(const Batch& in) {
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == 3, ValueError, "flip: sample ", i,
                     " is not an image (shape ", in.shape(i).to_string(), ")");
      shapes.push_back(in.shape(i));
    }
    return shapes;
  }
};

#ifdef STOKER_HAVE_CUDA
class CropGpu final : public Crop, public ResamplingStep {
 public:
  using Crop::Crop;
  void run(Workspace& ws) override {
    if (is_planar(ws.input(0))) return run_planar(ws);
    run_step(*this, *this, ws);
  }
  // CHW: each plane's window as one strided copy (filled outside the image), one launch.
  void run_planar(Workspace& ws) {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes;
    auto windows = plan(ws, in, shapes);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), "CHW");
    std::vector<kernels::StridedCopy> d;
    for (int i = 0; i < in.size(); ++i) {
      const auto s = frame_of(in, i);
      const auto& w = windows[size_t(i)];
      const auto fill = fill_bits(in.dtype(), s.channels);
      const size_t elem = dtype_size(in.dtype());
      const auto* src = static_cast<const uint8_t*>(in.data(i));
      auto* dst = static_cast<uint8_t*>(out.data(i));
      for (int64_t c = 0; c < s.channels && w.height * w.width > 0; ++c)
        d.push_back(copy_desc(src + size_t(c * s.height * s.width) * elem,
                              dst + size_t(c * w.height * w.width) * elem, {w.height, w.width},
                              {w.width, 1}, {s.width, 1}, {s.height, s.width}, "crop", {w.y, w.x},
                              fill[size_t(c)]));
    }
    if (!d.empty()) run_copies(*this, ws, d, dtype_size(in.dtype()));
  }
  Output plan_step(Workspace& ws, const Batch& in) override {
    STOKER_ENFORCE(!is_planar(in), ValueError, "crop (gpu): fused chains need HWC images");
    Output o;
    auto windows = plan(ws, in, o.shapes);
    o.dtype = in.dtype();
    o.layout = "HWC";
    if (in.size() == 0) return o;
    const DType t = in.dtype();
    STOKER_ENFORCE(t == DType::kU8 || t == DType::kI16 || t == DType::kU16 || t == DType::kF32,
                   TypeError, "crop (gpu): ", dtype_name(t),
                   " images are not supported on the GPU (uint8, int16, uint16, float32; the cpu "
                   "backend takes every integer and float type)");
    auto& p = o.params;
    p.channels = p.out_channels = int32_t(in.shape(0)[2]);
    for (int i = 1; i < in.size(); ++i)
      STOKER_ENFORCE(in.shape(i)[2] == p.channels, ValueError,
                     "crop (gpu): every sample needs the same channel count");
    for (int c = 0; c < kernels::kResampleMaxChannels; ++c) {
      p.inv_std[c] = 1.f;
      p.fill[c] = float(fill_[fill_.size() == 1 ? 0 : std::min<size_t>(c, fill_.size() - 1)]);
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
          "Cuts a window out of HWC or CHW images (none given: the whole image, as DALI's). Window "
          "placement: see crop_pos_x/y and rounding. "
          "out_of_bounds_policy: 'error' (default) rejects windows leaving the image, 'pad' "
          "fills outside pixels with `fill_values`, 'trim' shrinks the window to the image.",
      .inputs = {"images"},
      .outputs = {"cropped"},
      .args = {{"out_of_bounds_policy", ArgType::kString, "error | pad | trim.",
                std::string("error")},
               {"fill_values", ArgType::kFloatList, "Padding value(s), one or per channel.",
                std::vector<double>{0.0}}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Crop>(sp); },
      .make_gpu = STOKER_GPU_FACTORY(CropGpu),
      .sequences = true,
      .example = OpExample{.args = {{"crop", std::vector<double>{2, 2}}}},
  };
  for (auto& a : crop_arg_schemas()) s.args.push_back(a);
  s.fusion.chain = FusionTraits::Chain::kMiddle;
  s.fusion.fusable = [](const OpSpec& sp) {  // a padding crop writes pixels the chain has not
    return sp.arg<std::string>("out_of_bounds_policy") != "pad";
  };
  return s;
}

OpSchema flip_schema() {
  return {
      .name = "flip",
      .doc = "Flips HWC or CHW images horizontally and/or vertically, per sample.",
      .inputs = {"images"},
      .outputs = {"flipped"},
      .args = {{"horizontal", ArgType::kInt, "Flip left-right when non-zero.", int64_t{1}, true},
               {"vertical", ArgType::kInt, "Flip top-bottom when non-zero.", int64_t{0}, true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Flip>(s); },
      .make_gpu = STOKER_GPU_FACTORY(FlipGpu),
      .fusion = {.chain = FusionTraits::Chain::kMiddle, .mirror = true},
      .sequences = true,
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
