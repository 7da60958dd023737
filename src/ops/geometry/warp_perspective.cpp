// experimental.warp_perspective (CPU and GPU): every sample's matrix (argument or second input)
// turned into OpenCV's form on the host as DALI does (pixel_origin, inverse_map), then one kernel
// per image on the CPU or one launch per batch on the GPU.
#include "stoker/ops/geometry/warp_perspective.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "stoker/kernels/geometry/warp_perspective_cpu.hpp"
#include "stoker/kernels/geometry/warp_perspective_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/warp_args.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::PerspectiveSample;
using kernels::WarpBorder;

constexpr const char* kName = "experimental.warp_perspective";

WarpBorder parse_border(const std::string& s) {
  return parse_choice<WarpBorder>(kName, "border_mode", s, s,
                                  {{"constant", WarpBorder::kConstant},
                                   {"replicate", WarpBorder::kReplicate},
                                   {"reflect", WarpBorder::kReflect},
                                   {"reflect_101", WarpBorder::kReflect101},
                                   {"wrap", WarpBorder::kWrap}},
                                  "'constant', 'replicate', 'reflect', 'reflect_101' or 'wrap'");
}

kernels::PerspectiveInterp parse_interp(const std::string& s) {
  using kernels::PerspectiveInterp;
  return parse_choice<PerspectiveInterp>(kName, "interp_type", s, s,
                                         {{"linear", PerspectiveInterp::kLinear},
                                          {"nn", PerspectiveInterp::kNearest},
                                          {"cubic", PerspectiveInterp::kCubic}},
                                         "'nn', 'linear' or 'cubic'");
}

// cv::Matx33f's product a * b: float sums of float products, k in order.
std::array<float, 9> matmul_f(const std::array<float, 9>& a, const std::array<float, 9>& b) {
  std::array<float, 9> r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float s = 0;
      for (int k = 0; k < 3; ++k) s += a[size_t(i * 3 + k)] * b[size_t(k * 3 + j)];
      r[size_t(i * 3 + j)] = s;
    }
  return r;
}

// OpenCV's saturate_cast<T>(double) of a fill value: half to even, saturated; float as is.
float fill_as(DType t, double v) {
  if (t == DType::kF32) return float(v);
  const double lo = t == DType::kU8 ? 0 : t == DType::kU16 ? 0 : -32768;
  const double hi = t == DType::kU8 ? 255 : t == DType::kU16 ? 65535 : 32767;
  const double r = std::nearbyint(v);
  return float(!(r == r) ? 0 : std::clamp(r, lo, hi));
}

class WarpPerspective : public Operator {
 public:
  explicit WarpPerspective(const OpSpec& spec)
      : Operator(spec),
        interp_(parse_interp(spec.arg<std::string>("interp_type"))),
        center_(parse_pixel_origin_center(kName, spec.arg<std::string>("pixel_origin"))),
        border_(parse_border(spec.arg<std::string>("border_mode"))),
        fill_(spec.arg<std::vector<double>>("fill_value")) {
    const bool input = spec.inputs.size() > 1, arg = spec.given("matrix");
    STOKER_ENFORCE(input != arg, ValueError, kName,
                   ": give the matrix as the `matrix` argument or as the second input, ",
                   input ? "not both" : "one of them");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes;
    auto desc = plan(ws, in, shapes);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), in.layout());
    const int64_t C = channels(in);
    for_each_sample(ws, in.size(), [&](int i, int) {
      PerspectiveSample s = desc[size_t(i)];
      s.in = in.data(i), s.out = out.data(i);
      switch (in.dtype()) {
        case DType::kU8:
          kernels::warp_perspective_cpu<uint8_t>(s, C, interp_, border_);
          break;
        case DType::kU16:
          kernels::warp_perspective_cpu<uint16_t>(s, C, interp_, border_);
          break;
        case DType::kI16:
          kernels::warp_perspective_cpu<int16_t>(s, C, interp_, border_);
          break;
        default:
          kernels::warp_perspective_cpu<float>(s, C, interp_, border_);
          break;
      }
    });
  }

 protected:
  // Channels per pixel: HWC's C, 1 for HW (the layout checked by plan).
  static int64_t channels(const Batch& in) {
    return in.size() && in.shape(0).ndim() == 3 ? in.shape(0)[2] : 1;
  }

  // Checks the batch and arguments; every sample's descriptor (no data pointers) and shape.
  std::vector<PerspectiveSample> plan(const Workspace& ws, const Batch& in,
                                      std::vector<TensorShape>& shapes) const {
    const DType t = in.dtype();
    STOKER_ENFORCE(t == DType::kU8 || t == DType::kU16 || t == DType::kI16 || t == DType::kF32,
                   TypeError, kName, ": expected uint8, uint16, int16 or float32 images, got ",
                   dtype_name(t));
    const std::string layout = in.layout().str();
    const int n = in.size();
    std::vector<PerspectiveSample> desc(static_cast<size_t>(n));
    shapes.assign(size_t(n), TensorShape{});
    const int64_t C = channels(in);
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      const bool hw = s.ndim() == 2 && (layout.empty() || layout == "HW");
      const bool hwc = s.ndim() == 3 && layout == "HWC";
      STOKER_ENFORCE(hw || hwc, ValueError, kName, ": sample ", i,
                     ": expected HW or HWC images (channels last; give the layout), got shape ",
                     s.to_string(), " and layout '", layout, "'");
      STOKER_ENFORCE(!hwc || s[2] == C, ValueError, kName, ": sample ", i, " has ", s[2],
                     " channels, sample 0 ", C);
      STOKER_ENFORCE(C >= 1 && C <= kernels::kPerspectiveMaxChannels, ValueError, kName,
                     ": images with 1 to 4 channels, got ", C);
      STOKER_ENFORCE(fill_.size() <= 1 || int64_t(fill_.size()) == C, ValueError, kName,
                     ": fill_value needs 1 or ", C, " values (one per channel), got ",
                     fill_.size());
      auto& d = desc[size_t(i)];
      d.h = s[0], d.w = s[1], d.oh = s[0], d.ow = s[1];
      if (spec_.has_arg("size") || ws.arg_inputs.count("size")) {
        auto size = list_arg(ws, "size", i);
        if (!size.empty()) {
          STOKER_ENFORCE(size.size() == 2, ValueError, kName, ": sample ", i,
                         ": size must be [height, width], got ", size.size(), " values");
          // DALI's: each extent rounded (as float), at least 1.
          for (auto& v : size) v = std::max<double>(1, std::round(float(v)));
          check_arg_elements(kName, "size", size, i, double(d.h) * double(d.w) * double(C));
          d.oh = int64_t(size[0]), d.ow = int64_t(size[1]);
        }
      }
      shapes[size_t(i)] = hwc ? TensorShape{d.oh, d.ow, C} : TensorShape{d.oh, d.ow};
      for (int64_t c = 0; c < C; ++c)
        d.fill[c] = fill_.empty() ? 0.f : fill_as(t, fill_[fill_.size() == 1 ? 0 : size_t(c)]);
      matrix(ws, i, d.m);
    }
    return desc;
  }

  // Sample i's output-to-input map in OpenCV's form (pixel centres at integers).
  void matrix(const Workspace& ws, int i, double* m) const {
    std::vector<double> v;
    if (ws.inputs.size() > 1) {
      const Batch& mb = ws.input(1);
      STOKER_ENFORCE(mb.dtype() == DType::kF32, TypeError, kName,
                     ": the matrix input must be float32, got ", dtype_name(mb.dtype()));
      const auto& s = mb.shape(i);
      STOKER_ENFORCE(s.ndim() == 2 && s[0] == 3 && s[1] == 3, ValueError, kName, ": sample ", i,
                     ": the matrix input must be 3x3, got shape ", s.to_string());
      v = sample_as_doubles(mb, i);
    } else {
      v = list_arg(ws, "matrix", i);
      STOKER_ENFORCE(v.size() == 9, ValueError, kName, ": sample ", i,
                     ": matrix needs 9 values (3x3), got ", v.size());
    }
    std::array<float, 9> f{};
    for (size_t k = 0; k < 9; ++k) f[k] = float(v[k]);
    if (!center_) {
      // DALI: shiftBack * (M * shift) in float, shift moving by half a pixel.
      const std::array<float, 9> shift{1, 0, 0.5f, 0, 1, 0.5f, 0, 0, 1};
      const std::array<float, 9> back{1, 0, -0.5f, 0, 1, -0.5f, 0, 0, 1};
      f = matmul_f(back, matmul_f(f, shift));
    }
    double d[9];
    for (size_t k = 0; k < 9; ++k) d[k] = double(f[k]);
    if (spec_.arg<bool>("inverse_map")) {
      std::copy(d, d + 9, m);
      return;
    }
    // The matrix maps input to output: OpenCV's 3x3 inverse (adjugate over the determinant).
    auto S = [&](int r, int c) { return d[r * 3 + c]; };
    const double det = S(0, 0) * (S(1, 1) * S(2, 2) - S(1, 2) * S(2, 1)) -
                       S(0, 1) * (S(1, 0) * S(2, 2) - S(1, 2) * S(2, 0)) +
                       S(0, 2) * (S(1, 0) * S(2, 1) - S(1, 1) * S(2, 0));
    STOKER_ENFORCE(det != 0 && std::isfinite(det), ValueError, kName, ": sample ", i,
                   ": the matrix is singular (inverse_map=False needs its inverse)");
    const double r = 1. / det;
    m[0] = (S(1, 1) * S(2, 2) - S(1, 2) * S(2, 1)) * r;
    m[1] = (S(0, 2) * S(2, 1) - S(0, 1) * S(2, 2)) * r;
    m[2] = (S(0, 1) * S(1, 2) - S(0, 2) * S(1, 1)) * r;
    m[3] = (S(1, 2) * S(2, 0) - S(1, 0) * S(2, 2)) * r;
    m[4] = (S(0, 0) * S(2, 2) - S(0, 2) * S(2, 0)) * r;
    m[5] = (S(0, 2) * S(1, 0) - S(0, 0) * S(1, 2)) * r;
    m[6] = (S(1, 0) * S(2, 1) - S(1, 1) * S(2, 0)) * r;
    m[7] = (S(0, 1) * S(2, 0) - S(0, 0) * S(2, 1)) * r;
    m[8] = (S(0, 0) * S(1, 1) - S(0, 1) * S(1, 0)) * r;
  }

  kernels::PerspectiveInterp interp_;
  bool center_;
  WarpBorder border_;
  std::vector<double> fill_;
};

#ifdef STOKER_HAVE_CUDA
class WarpPerspectiveGpu final : public WarpPerspective {
 public:
  using WarpPerspective::WarpPerspective;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto desc = plan(ws, in, shapes);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), in.layout());
    if (n == 0) return;
    int64_t sum_h = 0, sum_w = 0;
    for (int i = 0; i < n; ++i) {
      desc[size_t(i)].in = in.data(i), desc[size_t(i)].out = out.data(i);
      sum_h += desc[size_t(i)].oh, sum_w += desc[size_t(i)].ow;
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::warp_perspective_gpu(
                   static_cast<const PerspectiveSample*>(device->data()), n, (sum_h + n - 1) / n,
                   (sum_w + n - 1) / n, int(channels(in)), interp_, border_, in.dtype(), ws.stream),
               std::string(kName) + " (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema warp_perspective_schema() {
  return OpSchema{
      .name = kName,
      .doc =
          "Warps HW or HWC images (1 to 4 channels; sequences of them) by a 3x3 perspective "
          "`matrix` (the argument, or the second input, float32 3x3), as DALI's: with "
          "inverse_map it maps output to input points, else input to output (then inverted). "
          "pixel_origin 'corner' puts (0, 0) at the top-left pixel's corner, 'center' at its "
          "centre (OpenCV's convention). The arithmetic is OpenCV's warpPerspective, as "
          "DALI's CPU backend: nearest rounds the source point half to even; linear "
          "quantises it to 1/32 pixel and weighs the four pixels around it (15-bit fixed "
          "point for uint8, float otherwise, rounded half to even and saturated); cubic weighs "
          "the 4x4 pixels around the point with OpenCV's cubic kernel (A = -0.75), in float. Taps "
          "outside the image follow border_mode. Output size: `size` (each extent rounded, "
          "at least 1), else the input's. uint8, uint16, int16 and float32.",
      .inputs = {"input", "matrix_input"},
      .optional_inputs = 1,
      .host_inputs = 1,
      .outputs = {"output"},
      .args = {optional_arg("matrix", ArgType::kFloatList,
                            "The 3x3 matrix, 9 values row by row (or give the second input)."),
               {"size", ArgType::kFloatList, "Output [height, width] (empty: the input's).",
                std::vector<double>{}, true},
               {"border_mode", ArgType::kString,
                "'constant' (fill_value), 'replicate', 'reflect', 'reflect_101' or 'wrap'.",
                std::string("constant")},
               {"fill_value", ArgType::kFloatList,
                "The constant border: one value, or one per channel (default 0).",
                std::vector<double>{}},
               {"interp_type", ArgType::kString, "'linear' (bilinear), 'nn' or 'cubic'.",
                std::string("linear")},
               {"inverse_map", ArgType::kBool, "The matrix maps output to input points.", true},
               {"pixel_origin", ArgType::kString, "'corner' or 'center'.", std::string("corner")}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<WarpPerspective>(sp); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) { return std::make_unique<WarpPerspectiveGpu>(sp); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"matrix", std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1}}}},
  };
}

}  // namespace stoker::ops
