#include "stoker/ops/normalize/crop_mirror_normalize.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "stoker/kernels/normalize/crop_mirror_normalize_cpu.hpp"
#include "stoker/kernels/normalize/crop_mirror_normalize_nd.hpp"
#include "stoker/ops/geometry/crop_args.hpp"
#include "stoker/ops/geometry/crop_nd.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"

namespace stoker::ops {
namespace {

// Layouts crop_mirror_normalize takes (sequences with F first come frame by frame; CFHW whole,
// its frames cut alike); without a layout 3 dimensions are HWC, 4 DHWC (DALI's reading).
const std::vector<std::string> kLayouts = {"HWC", "CHW", "DHWC", "CDHW", "CFHW"};

class CropMirrorNormalize : public Operator {
 public:
  explicit CropMirrorNormalize(const OpSpec& spec) : Operator(spec) {
    out_dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
    STOKER_ENFORCE(out_dtype_ == DType::kF32 || out_dtype_ == DType::kF16 ||
                       out_dtype_ == DType::kU8 || out_dtype_ == DType::kI8,
                   TypeError,
                   "crop_mirror_normalize: dtype must be float32, float16, uint8 or "
                   "int8, got ",
                   dtype_name(out_dtype_));
    given_layout_ = spec.arg<std::string>("output_layout");
    const auto policy = spec.arg<std::string>("out_of_bounds_policy");
    policy_ = policy == "constant" ? "pad" : policy;
    STOKER_ENFORCE(policy_ == "error" || policy_ == "pad" || policy_ == "trim_to_shape", ValueError,
                   "crop_mirror_normalize: out_of_bounds_policy must be 'error', 'pad' (or "
                   "'constant') or 'trim_to_shape', got '",
                   policy, "'");
    fill_ = spec.arg<std::vector<double>>("fill_values");
    scale_ = spec.arg<double>("scale");
    shift_ = spec.arg<double>("shift");
    pad_ = spec.arg<bool>("pad_output");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_input_type(in.dtype());
    Plan p = plan(ws, in);
    Batch& out = add_output(ws, out_dtype_, p.shapes, p.out_layout);
    for_each_sample(ws, in.size(), [&](int i, int) {
      const auto& sp = p.samples[size_t(i)];
      visit_dtype<DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kF16,
                  DType::kF32>(in.dtype(), "crop_mirror_normalize input", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        visit_dtype<DType::kF32, DType::kF16, DType::kU8,
                    DType::kI8>(out_dtype_, "crop_mirror_normalize output", [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          if (!sp.image) {
            kernels::crop_mirror_normalize_nd_cpu<Out, In>(
                nd_sample(p, i, in.shape(i), in.data(i), out.data(i)));
            return;
          }
          const auto& s = in.shape(i);
          kernels::ImageView<const In> src{in.data_as<const In>(i), s[0], s[1], s[2], s[1] * s[2]};
          const auto& b = sp.box;
          kernels::NormalizeParams np{sp.mean,
                                      sp.inv_std,
                                      float(shift_),
                                      sp.mirror,
                                      p.out_layout == "CHW",
                                      int64_t(sp.fill.size())};
          kernels::crop_mirror_normalize_cpu<Out, In>(
              out.data_as<Out>(i), src.window(b.anchor[1], b.anchor[2], b.extent[1], b.extent[2]),
              np);
        });
      });
    });
  }

 protected:
  // One sample's work: its window (after out_of_bounds_policy), normalisation and fill per
  // channel, and whether the image kernel does it (an HWC image whose window lies inside it, the
  // channels pad_output adds 0) or the N-D one.
  struct SamplePlan {
    CropBox box;
    std::vector<float> mean, inv_std;  // per input channel
    std::vector<float> fill;           // per output channel
    bool mirror = false;
    bool image = false;
  };
  struct Plan {
    std::string in_layout, out_layout;
    LayoutAxes ax;
    std::vector<int> perm;  // output axis -> input axis
    std::vector<SamplePlan> samples;
    std::vector<TensorShape> shapes;
  };

  Plan plan(Workspace& ws, const Batch& in) const {
    const int n = in.size();
    Plan p;
    p.in_layout = in.layout().str();
    if (n > 0)
      p.ax = layout_axes(p.in_layout, in.sample_ndim(), kLayouts, "crop_mirror_normalize",
                         &p.in_layout);
    p.out_layout = given_layout_.empty() ? p.in_layout : given_layout_;
    if (n > 0) {
      std::string a = p.in_layout, b = p.out_layout;
      std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
      STOKER_ENFORCE(a == b, ValueError, "crop_mirror_normalize: output_layout '", p.out_layout,
                     "' is not a permutation of the input's layout '", p.in_layout,
                     "' (output_layout=\"\" keeps the input's)");
      for (char c : p.out_layout) p.perm.push_back(int(p.in_layout.find(c)));
    }
    p.samples.resize(size_t(n));
    p.shapes.assign(size_t(n), TensorShape{});
    const auto& ax = p.ax;
    const int ndim = int(p.in_layout.size());
    const bool image_layouts =
        p.in_layout == "HWC" && (p.out_layout == "HWC" || p.out_layout == "CHW");
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == ndim, ValueError, "crop_mirror_normalize: a sample of shape ",
                     s.to_string(), " for layout '", p.in_layout, "'");
      auto& sp = p.samples[size_t(i)];
      const std::array<int64_t, 3> ext{ax.volume() ? s[ax.d] : 1, s[ax.h], s[ax.w]};
      sp.box = crop_box_arg(*this, ws, i, ax.volume() ? s[ax.d] : -1, s[ax.h], s[ax.w]);
      bound_box(sp.box, ext, policy_, "crop_mirror_normalize");
      const int64_t channels = s[ax.c];
      normalisation(ws, i, channels, sp);
      sp.mirror = scalar_arg(ws, "mirror", i) != 0;
      std::vector<int64_t> dims;
      for (int a : p.perm) {
        const int k = box_axis(ax, a);
        dims.push_back(a == ax.c ? int64_t(sp.fill.size())
                       : k >= 0  ? sp.box.extent[size_t(k)]
                                 : s[a]);
      }
      p.shapes[size_t(i)] = TensorShape(dims);
      bool inside = true;
      for (size_t k = 0; k < 3; ++k)
        inside = inside && sp.box.anchor[k] >= 0 && sp.box.anchor[k] + sp.box.extent[k] <= ext[k];
      sp.image =
          image_layouts && inside &&
          std::all_of(sp.fill.begin() + channels, sp.fill.end(), [](float f) { return f == 0; });
    });
    return p;
  }

  // Sample i's mean, scale / std and fill values (the fill only with out_of_bounds_policy "pad",
  // raw: not normalised, converted to the output type as DALI converts it, toward zero; the
  // channels pad_output adds take it too, else 0).
  void normalisation(const Workspace& ws, int i, int64_t channels, SamplePlan& sp) const {
    const auto mean = list_arg(ws, "mean", i), sd = list_arg(ws, "std", i);
    STOKER_ENFORCE(mean.size() == sd.size() || mean.size() == 1 || sd.size() == 1, ValueError,
                   "crop_mirror_normalize: mean and std must have the same size, or one of them "
                   "a single value; got ",
                   mean.size(), " and ", sd.size());
    for (const auto* v : {&mean, &sd})
      STOKER_ENFORCE(v->size() == 1 || int64_t(v->size()) == channels, ValueError,
                     "crop_mirror_normalize: mean and std need 1 or ", channels,
                     " values (one per channel), got ", v->size());
    sp.mean.clear(), sp.inv_std.clear();
    for (int64_t c = 0; c < channels; ++c) {
      const double m = mean[mean.size() == 1 ? 0 : size_t(c)];
      const double d = sd[sd.size() == 1 ? 0 : size_t(c)];
      STOKER_ENFORCE(d != 0, ValueError, "crop_mirror_normalize: std must not contain 0");
      sp.mean.push_back(float(m));
      sp.inv_std.push_back(float(scale_ / d));
    }
    const int64_t out_channels = padded_channels(channels);
    sp.fill.assign(size_t(out_channels), 0.f);
    if (policy_ != "pad") return;
    STOKER_ENFORCE(fill_.size() == 1 || int64_t(fill_.size()) == out_channels, ValueError,
                   "crop_mirror_normalize: fill_values needs 1 or ", out_channels,
                   " values (one per output channel), got ", fill_.size());
    const bool integer = out_dtype_ == DType::kU8 || out_dtype_ == DType::kI8;
    for (int64_t c = 0; c < out_channels; ++c) {
      const float f = float(fill_[fill_.size() == 1 ? 0 : size_t(c)]);
      sp.fill[size_t(c)] = integer ? std::trunc(f) : f;
    }
  }

  // The N-D kernel's descriptor of sample i (host pointers to the plan's values).
  kernels::CmnNdSample nd_sample(const Plan& p, int i, const TensorShape& s, const void* in,
                                 void* out) const {
    const auto& sp = p.samples[size_t(i)];
    const auto& shape = p.shapes[size_t(i)];
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
    const auto stride = dense_strides(dims);
    kernels::CmnNdSample d;
    d.in = in, d.out = out, d.ndim = int32_t(s.ndim());
    STOKER_ASSERT(d.ndim <= kernels::kCmnMaxDims, "crop_mirror_normalize of ", d.ndim, " dims");
    for (int j = 0; j < d.ndim; ++j) {
      const int a = p.perm[size_t(j)], k = box_axis(p.ax, a);
      d.shape[j] = shape[j], d.extent[j] = s[a], d.stride[j] = stride[size_t(a)];
      d.start[j] = k >= 0 ? sp.box.anchor[size_t(k)] : 0, d.step[j] = 1;
      if (a == p.ax.w && sp.mirror) d.start[j] += d.shape[j] - 1, d.step[j] = -1;
      if (a == p.ax.c) d.c_axis = j;
    }
    d.mean = sp.mean.data(), d.inv_std = sp.inv_std.data(), d.fill = sp.fill.data();
    d.shift = float(shift_);
    return d;
  }

  // DALI's input types (the same message on both backends).
  static void check_input_type(DType t) {
    visit_dtype<DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kF16, DType::kF32>(
        t, "crop_mirror_normalize input", [](auto) {});
  }

  // The output's channels: with pad_output the next power of two (DALI's: 3 -> 4, 5 -> 8, 1 and
  // 2 stay), the added ones 0 (or the fill value when padding).
  int64_t padded_channels(int64_t c) const {
    if (!pad_) return c;
    int64_t p = 1;
    while (p < c) p *= 2;
    return p;
  }

  DType out_dtype_ = DType::kF32;
  std::string given_layout_, policy_;
  std::vector<double> fill_;
  double scale_ = 1, shift_ = 0;
  bool pad_ = false;
};

#ifdef STOKER_HAVE_CUDA
class CropMirrorNormalizeGpu final : public CropMirrorNormalize, public ResamplingStep {
 public:
  using CropMirrorNormalize::CropMirrorNormalize;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (resamplable(ws, in)) return run_step(*this, *this, ws);
    run_nd(ws, in);
  }

  // As the resampling kernel's step (alone, or the end of a fused chain): HWC images, the
  // normalisation alike for the batch; windows outside the image take the fill raw.
  Output plan_step(Workspace& ws, const Batch& in) override {
    const int n = in.size();
    Plan pl = plan(ws, in);
    Output o;
    o.shapes = pl.shapes;
    o.dtype = out_dtype_;
    o.layout = pl.out_layout;
    if (n == 0) return o;
    STOKER_ENFORCE(pl.in_layout == "HWC", ValueError,
                   "crop_mirror_normalize (gpu): a fused chain takes HWC images, got '",
                   pl.in_layout, "'");
    STOKER_ENFORCE(resampler_type(in.dtype()), TypeError,
                   "crop_mirror_normalize (gpu): unsupported input dtype ", dtype_name(in.dtype()),
                   " in a fused chain (uint8, uint16, int16, float32)");
    auto& p = o.params;
    const auto& first = pl.samples[0];
    p.channels = int32_t(first.mean.size());
    for (int i = 1; i < n; ++i)
      STOKER_ENFORCE(in.shape(i)[2] == p.channels, ValueError,
                     "crop_mirror_normalize (gpu): every sample needs the same channel count");
    STOKER_ENFORCE(p.channels <= kernels::kResampleMaxChannels, ValueError,
                   "crop_mirror_normalize (gpu): at most ", kernels::kResampleMaxChannels,
                   " channels");
    p.out_channels = int32_t(first.fill.size());
    p.planar = pl.out_layout == "CHW";
    for (int c = 0; c < p.channels; ++c)
      p.mean[c] = first.mean[size_t(c)], p.inv_std[c] = first.inv_std[size_t(c)];
    for (int c = 0; c < p.out_channels; ++c) p.fill[c] = first.fill[size_t(c)];
    p.shift = float(shift_);
    o.plans.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      auto& q = o.plans[size_t(i)];
      const auto& sp = pl.samples[size_t(i)];
      q.copy = true;
      q.copy_y = sp.box.anchor[1], q.copy_x = sp.box.anchor[2];
      q.mirror_x = sp.mirror;
    }
    return o;
  }

 private:
  static bool resampler_type(DType t) {
    return t == DType::kU8 || t == DType::kF32 || t == DType::kU16 || t == DType::kI16;
  }
  // Whether the resampling kernel takes this batch: HWC images of one channel count (at most its
  // 16) and element type, laid out HWC or CHW, one mean and std for all.
  bool resamplable(const Workspace& ws, const Batch& in) const {
    const auto& l = in.layout().str();
    if (!(l == "HWC" || (l.empty() && in.sample_ndim() == 3)) || !resampler_type(in.dtype()))
      return false;
    if (!(given_layout_.empty() || given_layout_ == "HWC" || given_layout_ == "CHW")) return false;
    if (ws.arg_inputs.count("mean") || ws.arg_inputs.count("std")) return false;
    for (int i = 0; i < in.size(); ++i)
      if (in.shape(i).ndim() != 3 || in.shape(i)[2] != in.shape(0)[2] ||
          in.shape(i)[2] > kernels::kResampleMaxChannels)
        return false;
    return true;
  }
  // Any other batch: the N-D kernel, one launch. The samples' mean, scale / std and fill values
  // go up first, in one array the descriptors point into.
  void run_nd(Workspace& ws, const Batch& in) {
    check_input_type(in.dtype());
    Plan p = plan(ws, in);
    Batch& out = add_output(ws, out_dtype_, p.shapes, p.out_layout);
    const int n = in.size();
    std::vector<float> values;
    std::vector<size_t> at(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto& sp = p.samples[size_t(i)];
      at[size_t(i)] = values.size();
      values.insert(values.end(), sp.mean.begin(), sp.mean.end());
      values.insert(values.end(), sp.inv_std.begin(), sp.inv_std.end());
      values.insert(values.end(), sp.fill.begin(), sp.fill.end());
    }
    if (values.empty()) return;
    auto device_values = upload(ws, values);
    const float* base = static_cast<const float*>(device_values->data());
    std::vector<kernels::CmnNdSample> d;
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      if (ws.failures && ws.failures->contains(i)) continue;
      auto x = nd_sample(p, i, in.shape(i), in.data(i), out.data(i));
      const size_t channels = p.samples[size_t(i)].mean.size();
      x.mean = base + at[size_t(i)], x.inv_std = x.mean + channels, x.fill = x.inv_std + channels;
      d.push_back(x);
      most = std::max(most, p.shapes[size_t(i)].volume());
    }
    if (d.empty()) return;
    auto device = upload(ws, d);
    cuda_check(kernels::crop_mirror_normalize_nd_gpu(
                   static_cast<const kernels::CmnNdSample*>(device->data()), int(d.size()), most,
                   in.dtype(), out_dtype_, ws.stream),
               "crop_mirror_normalize (gpu): launching the kernel");
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
          "Takes images (HWC, CHW), volumes (DHWC, CDHW) and clips (CFHW; sequences with F "
          "first frame by frame). Crops (optional; the window as in `crop`, "
          "out_of_bounds_policy 'error', 'pad' or 'trim_to_shape'), mirrors the width when "
          "`mirror` is non-zero, normalises out = (in - mean) / std * scale + shift (computed "
          "in float32 as (in - mean) * (scale / std) + shift; mean and std per channel on the "
          "C axis), lays the result out as `output_layout` (a permutation of the input's "
          "layout; \"\": the input's) and casts to `dtype` (float32, float16 "
          "round-to-nearest-even, uint8/int8 rounded half away from zero and saturated). "
          "Padding writes `fill_values` as they are (not normalised). `pad_output` adds "
          "channels up to the next power of two (3 -> 4, 5 -> 8), 0 or, when padding, the "
          "fill value, as DALI's.",
      .inputs = {"images"},
      .outputs = {"normalized"},
      .args = {{"mean", ArgType::kFloatList, "Per-channel (or single) mean.",
                std::vector<double>{0.0}, true},
               {"std", ArgType::kFloatList, "Per-channel (or single) standard deviation.",
                std::vector<double>{1.0}, true},
               {"scale", ArgType::kFloat, "Multiplier applied after dividing by std.", 1.0},
               {"shift", ArgType::kFloat, "Added last.", 0.0},
               {"mirror", ArgType::kInt, "Mirror horizontally when non-zero.", int64_t{0}, true},
               {"dtype", ArgType::kDType, "float32, float16, uint8 or int8.",
                std::string("float32")},
               {"output_layout", ArgType::kString,
                "A permutation of the input's layout ('CHW' for HWC images), or '' (the "
                "input's).",
                std::string("CHW")},
               {"pad_output", ArgType::kBool,
                "Pad channels up to the next power of two (0, or the fill value when padding).",
                false},
               {"out_of_bounds_policy", ArgType::kString,
                "Where the window leaves the input: error | pad (or constant: fill_values) | "
                "trim_to_shape.",
                std::string("error")},
               {"fill_values", ArgType::kFloatList,
                "Padding value(s), one, or one per output channel; written as they are.",
                std::vector<double>{0.0}}},
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
  // A chain normalises its batch alike and crops inside the image.
  s.fusion.fusable = [](const OpSpec& sp) {
    const auto p = sp.arg<std::string>("out_of_bounds_policy");
    return !sp.arg_inputs.count("mean") && !sp.arg_inputs.count("std") && p != "pad" &&
           p != "constant";
  };
  s.fusion.absorb_next = absorb_next;
  return s;
}

}  // namespace stoker::ops
