#include "stoker/ops/color/color_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "stoker/kernels/color/color_cpu.hpp"
#include "stoker/kernels/color/color_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// The value range used by brightness_shift (the output's) and the default contrast centre
// (the input's): integers their maximum and half of it rounded up, floats 1 and 0.5.
double type_max(DType d, const std::string& what) {
  return visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kI32, DType::kF16,
                     DType::kF32>(d, what, [](auto tag) -> double {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return double(std::numeric_limits<T>::max());
    return 1.0;
  });
}
double half_range(DType d, const std::string& what) {
  return is_float(d) ? 0.5 : std::ceil(type_max(d, what) / 2);
}

enum class Kind { kBrightness, kContrast, kBrightnessContrast, kHsv, kHue, kSaturation, kTwist };

class ColorOp : public Operator {
 public:
  ColorOp(const OpSpec& spec, Kind kind) : Operator(spec), kind_(kind) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Batch& out = add_output(ws, out_dtype(in), shapes(in), in.layout());
    for_each_sample(ws, n, [&](int i, int) {
      const Map map = sample_map(ws, in, out.dtype(), i);
      const int64_t elems = in.shape(i).volume();
      visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kI32, DType::kF16,
                  DType::kF32>(in.dtype(), spec_.schema->name + " input", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kI32, DType::kF16,
                    DType::kF32>(out.dtype(), spec_.schema->name + " output", [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          const In* src = in.data_as<const In>(i);
          Out* dst = out.data_as<Out>(i);
          if (!matrix())
            kernels::affine_cpu(src, elems, map.gain, map.bias, dst);
          else
            kernels::color_matrix_cpu(src, elems / 3, map.m, map.offset, dst);
        });
      });
    });
  }

 protected:
  // Sample i's map: out = in * gain + bias (affine kinds) or out = m * rgb + offset.
  struct Map {
    float gain = 1, bias = 0;
    kernels::Mat3 m{};
    std::array<double, 3> offset{0, 0, 0};
  };

  bool matrix() const { return kind_ >= Kind::kHsv; }
  DType out_dtype(const Batch& in) const {
    return spec_.has_arg("dtype") ? dtype_from_name(spec_.arg<std::string>("dtype")) : in.dtype();
  }
  std::vector<TensorShape> shapes(const Batch& in) const {
    std::vector<TensorShape> out(static_cast<size_t>(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      out[size_t(i)] = in.shape(i);
      if (matrix())
        STOKER_ENFORCE(in.shape(i).ndim() >= 1 && in.shape(i)[in.shape(i).ndim() - 1] == 3,
                       ValueError, spec_.schema->name,
                       ": expects RGB data (3 channels, channels last), got shape ",
                       in.shape(i).to_string(), " for sample ", i);
    }
    return out;
  }
  Map sample_map(const Workspace& ws, const Batch& in, DType out_dtype, int i) const {
    auto arg = [&](const char* name, double fallback) {
      return spec_.schema->find_arg(name) ? scalar_arg(ws, name, i) : fallback;
    };
    const double b = arg("brightness", 1), shift = arg("brightness_shift", 0);
    const double k = arg("contrast", 1);
    const double c = spec_.has_arg("contrast_center") || ws.arg_inputs.count("contrast_center")
                         ? scalar_arg(ws, "contrast_center", i)
                         : half_range(in.dtype(), spec_.schema->name + " input");
    const double range = type_max(out_dtype, spec_.schema->name + " output");
    Map map;
    // shift*range + b*(c + k*(x - c)) = (b*k) x + (shift*range + b*c*(1 - k))
    map.gain = float(b * k);
    map.bias = float(shift * range + b * c * (1 - k));
    if (matrix()) {
      map.m = kernels::hsv_matrix(arg("hue", 0), arg("saturation", 1), arg("value", 1));
      for (auto& row : map.m)
        for (auto& v : row) v *= b * k;
      const double o = b * c * (1 - k);
      map.offset = {o, o, o};
    }
    return map;
  }

 private:
  Kind kind_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the same maps, one launch per batch (uint8/float16/float32 in and out).
class ColorOpGpu final : public ColorOp {
 public:
  using ColorOp::ColorOp;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Batch& out = add_output(ws, out_dtype(in), shapes(in), in.layout());
    for (DType d : {in.dtype(), out.dtype()})
      STOKER_ENFORCE(d == DType::kU8 || d == DType::kF16 || d == DType::kF32, TypeError,
                     spec_.schema->name, " (gpu): unsupported dtype ", dtype_name(d),
                     " (uint8, float16, float32)");
    if (n == 0) return;
    std::vector<kernels::ColorGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for_each_sample(ws, n, [&](int i, int) {
      const Map map = sample_map(ws, in, out.dtype(), i);
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i), d.elements = in.shape(i).volume();
      d.gain = map.gain, d.bias = map.bias;
      for (int r = 0; r < 3; ++r) {
        d.offset[r] = float(map.offset[size_t(r)]);
        for (int c = 0; c < 3; ++c) d.m[3 * r + c] = float(map.m[size_t(r)][size_t(c)]);
      }
    });
    for (const auto& d : desc) most = std::max(most, d.elements);
    auto device = upload(ws, desc);
    cuda_check(kernels::color_gpu(static_cast<const kernels::ColorGpuSample*>(device->data()), n,
                                  most, matrix(), in.dtype(), out.dtype(), ws.stream),
               spec_.schema->name + " (gpu): launching the kernel");
  }
};
#endif

ArgSchema per_sample(std::string name, std::string doc, double fallback) {
  ArgSchema a{std::move(name), ArgType::kFloat, std::move(doc), fallback};
  a.per_sample = true;
  return a;
}

ArgSchema dtype_arg() {
  ArgSchema a{"dtype", ArgType::kDType,
              "Output dtype (uint8, int8, uint16, int16, int32, float16, float32; default: the "
              "input's). Integers are rounded half away from zero and saturated.",
              std::nullopt};
  a.optional = true;
  return a;
}

OpSchema color_schema(std::string name, std::string doc, Kind kind, std::vector<ArgSchema> args) {
  args.push_back(dtype_arg());
  return OpSchema{
      .name = std::move(name),
      .doc = std::move(doc),
      .inputs = {"input"},
      .outputs = {"output"},
      .args = std::move(args),
      .make_cpu = [kind](const OpSpec& s) { return std::make_unique<ColorOp>(s, kind); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [kind](const OpSpec& s) { return std::make_unique<ColorOpGpu>(s, kind); },
#endif
      .sequences = true,
      .example = OpExample{},
  };
}

const char* kAffineDoc =
    " Element-wise, any shape: out = brightness_shift * R + brightness * (contrast_center + "
    "contrast * (in - contrast_center)), where R is the output type's maximum for integers "
    "(255 for uint8) and 1 for floats, and contrast_center defaults to half the input type's "
    "positive range rounded up (128 for uint8) or 0.5 for floats.";
const char* kMatrixDoc =
    " RGB (3 channels, last) only, as DALI does it: a linear map in YIQ space (hue turns I and "
    "Q by degrees, saturation scales them, value scales Y, I and Q), an approximation of HSV "
    "that keeps gray gray.";

ArgSchema brightness_arg() {
  return per_sample("brightness", "Multiplier (0: black, 1: unchanged).", 1.0);
}
ArgSchema shift_arg() {
  return per_sample("brightness_shift", "Added, in units of the output type's range.", 0.0);
}
ArgSchema contrast_arg() {
  return per_sample("contrast", "Stretch around contrast_center (0: uniform gray).", 1.0);
}
ArgSchema center_arg() {
  ArgSchema a = per_sample("contrast_center", "The value contrast keeps (see above).", 0.0);
  a.default_value.reset();
  a.optional = true;
  return a;
}
ArgSchema hue_arg() { return per_sample("hue", "Hue change in degrees.", 0.0); }
ArgSchema saturation_arg() {
  return per_sample("saturation", "Saturation multiplier (0: gray).", 1.0);
}

}  // namespace

OpSchema brightness_schema() {
  return color_schema("brightness", std::string("Changes brightness.") + kAffineDoc,
                      Kind::kBrightness, {brightness_arg(), shift_arg()});
}
OpSchema contrast_schema() {
  return color_schema("contrast", std::string("Changes contrast.") + kAffineDoc, Kind::kContrast,
                      {contrast_arg(), center_arg()});
}
OpSchema brightness_contrast_schema() {
  return color_schema(
      "brightness_contrast", std::string("Changes brightness and contrast.") + kAffineDoc,
      Kind::kBrightnessContrast, {brightness_arg(), shift_arg(), contrast_arg(), center_arg()});
}
OpSchema hsv_schema() {
  return color_schema(
      "hsv", std::string("Changes hue, saturation and value.") + kMatrixDoc, Kind::kHsv,
      {hue_arg(), saturation_arg(), per_sample("value", "Value (brightness) multiplier.", 1.0)});
}
OpSchema hue_schema() {
  return color_schema("hue", std::string("Changes hue.") + kMatrixDoc, Kind::kHue, {hue_arg()});
}
OpSchema saturation_schema() {
  return color_schema("saturation", std::string("Changes saturation.") + kMatrixDoc,
                      Kind::kSaturation, {saturation_arg()});
}
OpSchema color_twist_schema() {
  return color_schema(
      "color_twist",
      std::string("Changes hue and saturation (as hsv), then brightness and contrast (as "
                  "brightness_contrast, contrast around contrast_center): out = brightness * "
                  "(c + contrast * (HSV(in) - c)).") +
          kMatrixDoc,
      Kind::kTwist, {brightness_arg(), contrast_arg(), center_arg(), hue_arg(), saturation_arg()});
}

}  // namespace stoker::ops
