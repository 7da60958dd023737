// color_space_conversion (CPU): RGB, BGR, GRAY and YCbCr (ITU-R BT.601, studio range).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "stoker/kernels/color/color_cpu.hpp"
#include "stoker/kernels/color/color_gpu.hpp"
#include "stoker/ops/color/color_ops.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

enum class Space { kRGB, kBGR, kGray, kYCbCr };

Space parse_space(const std::string& s) {
  std::string u;
  for (char c : s) u += char(std::toupper(static_cast<unsigned char>(c)));
  if (u == "RGB") return Space::kRGB;
  if (u == "BGR") return Space::kBGR;
  if (u == "GRAY") return Space::kGray;
  if (u == "YCBCR") return Space::kYCbCr;
  throw ValueError("color_space_conversion: unknown colour space '" + s +
                   "' (RGB, BGR, GRAY, YCbCr)");
}

int channels(Space s) { return s == Space::kGray ? 1 : 3; }

// Studio-range BT.601 for 8-bit values (kernels/color): Y in [16, 235], Cb and Cr in [16, 240].
const kernels::Mat3& kToYCbCr = kernels::rgb_to_ycbcr_bt601();
using kernels::kYCbCrOffset;

class ColorSpaceConversion : public Operator {
 public:
  explicit ColorSpaceConversion(const OpSpec& spec)
      : Operator(spec),
        from_(parse_space(spec.arg<std::string>("image_type"))),
        to_(parse_space(spec.arg<std::string>("output_type"))) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Batch& out = add_output(ws, in.dtype(), shapes(in), in.layout());
    std::array<double, 3> off{};
    const kernels::Mat3 m = affine(off);
    const bool is_f = is_float(in.dtype());
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      const int64_t pixels = s[0] * s[1];
      visit_dtype<DType::kU8, DType::kF32>(in.dtype(), "color_space_conversion input", [&](auto t) {
        using T = typename decltype(t)::type;
        const T* src = in.data_as<const T>(i);
        T* dst = out.data_as<T>(i);
        kernels::color_space_cpu(src, pixels, channels(from_), channels(to_), m, off,
                                 is_f ? 255.0 : 1.0, dst);
      });
    });
  }

 protected:
  std::vector<TensorShape> shapes(const Batch& in) const {
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      auto s = image_shape(in, i, "color_space_conversion");
      STOKER_ENFORCE(s.channels == channels(from_), ValueError,
                     "color_space_conversion: image_type needs ", channels(from_),
                     " channels, sample ", i, " has ", s.channels);
      shapes.push_back(TensorShape{s.height, s.width, int64_t(channels(to_))});
    }
    return shapes;
  }

  // One affine map, out = m x + off: input -> RGB -> output, in 8-bit units (float images are
  // scaled by 255 around it, so YCbCr offsets stay in their 0-1 places).
  kernels::Mat3 affine(std::array<double, 3>& off) const {
    std::array<double, 3> off_in{0, 0, 0}, off_out{0, 0, 0};
    const kernels::Mat3 to_rgb = matrix_to_rgb(from_, off_in);
    const kernels::Mat3 from_rgb = matrix_from_rgb(to_, off_out);
    // out = F (T (x + off_in)) + off_out, T = to_rgb (with off_in folded as x - offset).
    kernels::Mat3 m = kernels::mat_mul(from_rgb, to_rgb);
    for (int r = 0; r < 3; ++r) {
      off[size_t(r)] = off_out[size_t(r)];
      for (int k = 0; k < 3; ++k) off[size_t(r)] += m[size_t(r)][size_t(k)] * off_in[size_t(k)];
    }
    return m;
  }

  // x (in space s) to RGB: RGB = M (x - offset); `offset` receives -offset (added to x).
  static kernels::Mat3 matrix_to_rgb(Space s, std::array<double, 3>& add) {
    switch (s) {
      case Space::kBGR:
        return {{{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
      case Space::kGray:
        return {{{1, 0, 0}, {1, 0, 0}, {1, 0, 0}}};  // gray repeated
      case Space::kYCbCr:
        for (int k = 0; k < 3; ++k) add[size_t(k)] = -kYCbCrOffset[size_t(k)];
        return kernels::inverse(kToYCbCr);
      default:
        return {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    }
  }
  // RGB to space s: y = M rgb + offset.
  static kernels::Mat3 matrix_from_rgb(Space s, std::array<double, 3>& offset) {
    switch (s) {
      case Space::kBGR:
        return {{{0, 0, 1}, {0, 1, 0}, {1, 0, 0}}};
      case Space::kGray:
        return {{{0.299, 0.587, 0.114}, {0, 0, 0}, {0, 0, 0}}};
      case Space::kYCbCr:
        offset = kYCbCrOffset;
        return kToYCbCr;
      default:
        return {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    }
  }

  Space from_, to_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the same affine map on every pixel, one launch per batch (uint8, float32).
class ColorSpaceConversionGpu final : public ColorSpaceConversion {
 public:
  using ColorSpaceConversion::ColorSpaceConversion;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Batch& out = add_output(ws, in.dtype(), shapes(in), in.layout());
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kF32, TypeError,
                   "color_space_conversion (gpu): unsupported dtype ", dtype_name(in.dtype()),
                   " (uint8, float32)");
    if (n == 0) return;
    std::array<double, 3> off{};
    const kernels::Mat3 m = affine(off);
    const double scale = is_float(in.dtype()) ? 255.0 : 1.0;  // offsets are in 8-bit units
    std::vector<kernels::ColorGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i), d.elements = in.shape(i).volume();
      d.in_channels = channels(from_), d.out_channels = channels(to_);
      for (int r = 0; r < 3; ++r) {
        d.offset[r] = float(off[size_t(r)] / scale);
        for (int c = 0; c < 3; ++c) d.m[3 * r + c] = float(m[size_t(r)][size_t(c)]);
      }
      most = std::max(most, d.elements);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::color_gpu(static_cast<const kernels::ColorGpuSample*>(device->data()), n,
                                  most, true, in.dtype(), out.dtype(), ws.stream),
               "color_space_conversion (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema color_space_conversion_schema() {
  return {
      .name = "color_space_conversion",
      .doc =
          "Converts HWC images between RGB, BGR, GRAY and YCbCr (ITU-R BT.601, studio range: "
          "Y = 16 + (65.481 R + 128.553 G + 24.966 B) / 255, Cb = 128 + (-37.797 R - 74.203 G "
          "+ 112 B) / 255, Cr = 128 + (112 R - 93.786 G - 18.214 B) / 255 for 8-bit values; "
          "float images are treated as 0-1). GRAY = 0.299 R + 0.587 G + 0.114 B; gray to "
          "colour repeats the value. uint8 results are rounded half away from zero and "
          "saturated.",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"image_type", ArgType::kString, "Colour space of the input."},
               {"output_type", ArgType::kString, "Colour space of the output."}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ColorSpaceConversion>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<ColorSpaceConversionGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"image_type", std::string("RGB")},
                                    {"output_type", std::string("YCbCr")}}},
  };
}

}  // namespace stoker::ops
