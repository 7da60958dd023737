#include "stoker/ops/normalize/crop_mirror_normalize.hpp"

#include "stoker/kernels/normalize/crop_mirror_normalize_cpu.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"
#include "stoker/ops/geometry/crop_args.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#endif

namespace stoker::ops {
namespace {

class CropMirrorNormalize : public Operator {
 public:
  explicit CropMirrorNormalize(const OpSpec& spec) : Operator(spec) {
    out_dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
    layout_ = spec.arg<std::string>("output_layout");
    STOKER_ENFORCE(layout_ == "CHW" || layout_ == "HWC" || layout_.empty(), ValueError,
                   "crop_mirror_normalize: output_layout must be 'CHW', 'HWC' or '' (the "
                   "input's), got '",
                   layout_, "'");
    mean_ = spec.arg<std::vector<double>>("mean");
    std_ = spec.arg<std::vector<double>>("std");
    for (double s : std_)
      STOKER_ENFORCE(s != 0, ValueError, "crop_mirror_normalize: std must not contain 0");
    scale_ = spec.arg<double>("scale");
    shift_ = spec.arg<double>("shift");
    pad_ = spec.arg<bool>("pad_output");
  }

  void run(Workspace& ws) override {
    Batch hwc;
    const Batch& in = hwc_input(ws, hwc);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto windows = plan(ws, in, shapes);
    Batch& out = add_output(ws, out_dtype_, std::move(shapes), layout_);
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      const auto& w = windows[size_t(i)];
      kernels::NormalizeParams p;
      for (int64_t c = 0; c < s[2]; ++c) {
        p.mean.push_back(float(mean_[mean_.size() == 1 ? 0 : size_t(c)]));
        p.inv_std.push_back(float(scale_ / std_[std_.size() == 1 ? 0 : size_t(c)]));
      }
      p.shift = float(shift_);
      p.mirror = scalar_arg(ws, "mirror", i) != 0;
      p.planar = layout_ == "CHW";
      p.out_channels = padded_channels(s[2]);
      visit_dtype<DType::kU8,
                  DType::kF32>(in.dtype(), "crop_mirror_normalize input", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        kernels::ImageView<const In> src{in.data_as<const In>(i), s[0], s[1], s[2], s[1] * s[2]};
        auto win = src.window(w.y, w.x, w.height, w.width);
        visit_dtype<DType::kF32, DType::kF16, DType::kU8, DType::kI8>(
            out_dtype_, "crop_mirror_normalize output", [&](auto out_tag) {
              using Out = typename decltype(out_tag)::type;
              kernels::crop_mirror_normalize_cpu<Out, In>(out.data_as<Out>(i), win, p);
            });
      });
    });
  }

 protected:
  // The crop window of every sample and the output shapes.
  std::vector<CropWindow> plan(Workspace& ws, const Batch& in,
                               std::vector<TensorShape>& shapes) const {
    const int n = in.size();
    std::vector<CropWindow> windows(static_cast<size_t>(n));
    shapes.assign(size_t(n), TensorShape{});
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, "crop_mirror_normalize");
      const CropWindow win = crop_window_arg(*this, ws, i, s.height, s.width);
      check_window_inside(win, s.height, s.width, "crop_mirror_normalize");
      for (auto* v : {&mean_, &std_})
        STOKER_ENFORCE(v->size() == 1 || int64_t(v->size()) == s.channels, ValueError,
                       "crop_mirror_normalize: mean and std need 1 or ", s.channels,
                       " values (one per channel), got ", v->size());
      const int64_t oc = padded_channels(s.channels);
      windows[size_t(i)] = win;
      shapes[size_t(i)] = layout_ == "CHW" ? TensorShape{oc, win.height, win.width}
                                           : TensorShape{win.height, win.width, oc};
    });
    return windows;
  }

  // The input as HWC images: CHW images transposed into `hwc` (pooled, on the device for the
  // gpu backend), whose pixels then go through the HWC path, so that both layouts give the same
  // values. With output_layout "", the output takes the input's layout (layout_ is set here).
  const Batch& hwc_input(Workspace& ws, Batch& hwc) {
    const Batch& in = ws.input(0);
    const bool chw = in.layout().str() == "CHW";
    if (spec_.arg<std::string>("output_layout").empty()) layout_ = chw ? "CHW" : "HWC";
    if (!chw) return in;
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 3, ValueError, "crop_mirror_normalize: sample ", i,
                     " has shape ", s.to_string(), " for layout CHW");
      shapes.push_back(TensorShape{s[1], s[2], s[0]});
    }
    const bool device = in.memory() == MemoryKind::kDevice;
    hwc = device ? Batch::allocate_on(ws.stream, *ws.device_pool, in.dtype(), shapes, "HWC")
                 : Batch::allocate(*ws.host_pool, in.dtype(), shapes, "HWC");
    std::vector<kernels::StridedCopy> copies;
    for (int i = 0; i < in.size(); ++i) {
      const auto& s = in.shape(i);
      kernels::StridedCopy c;
      c.in = in.data(i), c.out = hwc.data(i), c.ndim = 3, c.count = s.volume();
      const int64_t out_shape[3] = {s[1], s[2], s[0]};
      const int64_t in_stride[3] = {s[2], 1, s[1] * s[2]};  // (h, w, c) in the CHW sample
      const int64_t out_stride[3] = {s[2] * s[0], s[0], 1};
      for (int k = 0; k < 3; ++k)
        c.shape[k] = c.in_shape[k] = out_shape[k], c.in_stride[k] = in_stride[k],
        c.out_stride[k] = out_stride[k];
      copies.push_back(c);
    }
    const size_t elem = dtype_size(in.dtype());
#ifdef STOKER_HAVE_CUDA
    if (device) {
      run_copies(*this, ws, copies, elem);
      return hwc;
    }
#endif
    for_each_sample(ws, in.size(),
                    [&](int i, int) { kernels::strided_copy_cpu(copies[size_t(i)], elem); });
    return hwc;
  }

  // The output's channels: with pad_output the next power of two (DALI's: 3 -> 4, 5 -> 8, 1 and
  // 2 stay), the added ones zero.
  int64_t padded_channels(int64_t c) const {
    if (!pad_) return c;
    int64_t p = 1;
    while (p < c) p *= 2;
    return p;
  }

  DType out_dtype_ = DType::kF32;
  std::string layout_;
  std::vector<double> mean_, std_;
  double scale_ = 1, shift_ = 0;
  bool pad_ = false;
};

#ifdef STOKER_HAVE_CUDA
class CropMirrorNormalizeGpu final : public CropMirrorNormalize, public ResamplingStep {
 public:
  using CropMirrorNormalize::CropMirrorNormalize;
  void run(Workspace& ws) override {
    // CHW images: the step reads their HWC transposition (in this stage's stream order).
    Batch hwc;
    const Batch* given = ws.inputs.at(0);
    ws.inputs[0] = &hwc_input(ws, hwc);
    try {
      run_step(*this, *this, ws);
    } catch (...) {
      ws.inputs[0] = given;
      throw;
    }
    ws.inputs[0] = given;
  }
  Output plan_step(Workspace& ws, const Batch& in) override {
    const int n = in.size();
    Output o;
    if (layout_.empty()) layout_ = "HWC";  // output_layout "" at the end of a fused chain (HWC)
    auto windows = plan(ws, in, o.shapes);
    o.dtype = out_dtype_;
    o.layout = layout_;
    if (n == 0) return o;
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kF32 ||
                       in.dtype() == DType::kU16 || in.dtype() == DType::kI16,
                   TypeError, "crop_mirror_normalize (gpu): unsupported input dtype ",
                   dtype_name(in.dtype()), " (uint8, uint16, int16, float32)");
    auto& p = o.params;
    p.channels = int32_t(in.shape(0)[2]);
    for (int i = 1; i < n; ++i)
      STOKER_ENFORCE(in.shape(i)[2] == p.channels, ValueError,
                     "crop_mirror_normalize (gpu): every sample needs the same channel count");
    STOKER_ENFORCE(p.channels <= kernels::kResampleMaxChannels, ValueError,
                   "crop_mirror_normalize (gpu): at most ", kernels::kResampleMaxChannels,
                   " channels");
    p.out_channels = int32_t(padded_channels(p.channels));
    p.planar = layout_ == "CHW";
    for (int c = 0; c < p.channels; ++c) {
      p.mean[c] = float(mean_[mean_.size() == 1 ? 0 : size_t(c)]);
      p.inv_std[c] = float(scale_ / std_[std_.size() == 1 ? 0 : size_t(c)]);
    }
    p.shift = float(shift_);
    o.plans.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      auto& pl = o.plans[size_t(i)];
      pl.copy = true;
      pl.copy_y = windows[size_t(i)].y, pl.copy_x = windows[size_t(i)].x;
      pl.mirror_x = scalar_arg(ws, "mirror", i) != 0;
    }
    return o;
  }
};
#endif

}  // namespace

namespace {
// A transpose between HWC and CHW or a cast after a float32 gpu crop_mirror_normalize: its
// output_layout or dtype does the same (the same values: its float32 result is what the cast
// would have converted, rounded the same way).
bool absorb_next(OpSpec& cmn, const OpSpec& t) {
  if (!t.arg_inputs.empty() || cmn.arg<std::string>("dtype") != "float32") return false;
  if (t.schema->name == "transpose") {
    const auto perm = t.arg<std::vector<int64_t>>("perm");
    const auto layout = cmn.arg<std::string>("output_layout");
    const bool to_chw = layout == "HWC" && perm == std::vector<int64_t>{2, 0, 1};
    const bool to_hwc = layout == "CHW" && perm == std::vector<int64_t>{1, 2, 0};
    if ((!to_chw && !to_hwc) || t.has_arg("output_layout") || !t.arg<bool>("transpose_layout"))
      return false;
    cmn.args["output_layout"] = std::string(to_chw ? "CHW" : "HWC");
    return true;
  }
  if (t.schema->name == "cast") {
    const auto dtype = t.arg<std::string>("dtype");
    if (dtype != "float16" && dtype != "float32" && dtype != "uint8" && dtype != "int8")
      return false;
    cmn.args["dtype"] = dtype;
    return true;
  }
  return false;
}
}  // namespace

OpSchema crop_mirror_normalize_schema() {
  OpSchema s{
      .name = "crop_mirror_normalize",
      .doc =
          "Takes HWC or CHW images (and their sequences). Crops (optional; window as in "
          "`crop`, policy 'error'), mirrors horizontally "
          "when `mirror` is non-zero, normalises out = (in - mean) / std * scale + shift "
          "(computed in float32 as (in - mean) * (scale / std) + shift), lays the result "
          "out as CHW or HWC and casts to `dtype` (float32, float16 round-to-nearest-even, "
          "uint8/int8 rounded half away from zero and saturated). `pad_output` adds zero "
          "channels up to the next power of two (3 -> 4, 5 -> 8), as DALI's.",
      .inputs = {"images"},
      .outputs = {"normalized"},
      .args = {{"mean", ArgType::kFloatList, "Per-channel (or single) mean.",
                std::vector<double>{0.0}},
               {"std", ArgType::kFloatList, "Per-channel (or single) standard deviation.",
                std::vector<double>{1.0}},
               {"scale", ArgType::kFloat, "Multiplier applied after dividing by std.", 1.0},
               {"shift", ArgType::kFloat, "Added last.", 0.0},
               {"mirror", ArgType::kInt, "Mirror horizontally when non-zero.", int64_t{0}, true},
               {"dtype", ArgType::kDType, "float32, float16, uint8 or int8.",
                std::string("float32")},
               {"output_layout", ArgType::kString, "'CHW', 'HWC' or '' (the input's).",
                std::string("CHW")},
               {"pad_output", ArgType::kBool,
                "Pad channels with zeros up to the next power of two.", false}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<CropMirrorNormalize>(sp); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) -> std::unique_ptr<Operator> {
        if (sp.fused_first) return make_fused_resampling(sp);  // resize/RRC + this, one launch
        return std::make_unique<CropMirrorNormalizeGpu>(sp);
      },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"crop", std::vector<double>{2, 2}}}},
  };
  for (auto& a : crop_arg_schemas()) s.args.push_back(a);
  s.fusion.chain = FusionTraits::Chain::kEnd;
  s.fusion.absorb_next = absorb_next;
  return s;
}

}  // namespace stoker::ops
