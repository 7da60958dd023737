// warp_affine and rotate (CPU): both sample the input through an affine map of output pixel
// centres (kernels/geometry/warp_affine_cpu.hpp).
#include "stoker/ops/geometry/warp.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stoker/kernels/geometry/warp_affine_cpu.hpp"
#include "stoker/kernels/geometry/warp_affine_gpu.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// DALI's canvas for a rotated image: the bounding box rounded up (0.01 of slack, so that
// quarter turns give exactly the swapped extents), then one more pixel where needed to keep
// the parity of the input extent that dominates it (odd stays odd: less blur at the centre).
void rotated_canvas(double angle, int64_t h, int64_t w, int64_t& oh, int64_t& ow) {
  const double t = angle * 3.14159265358979323846 / 180, c = std::fabs(std::cos(t)),
               s = std::fabs(std::sin(t));
  ow = std::max<int64_t>(1, int64_t(std::ceil(double(w) * c + double(h) * s - 1e-2)));
  oh = std::max<int64_t>(1, int64_t(std::ceil(double(w) * s + double(h) * c - 1e-2)));
  const int64_t pw = (s <= c ? w : h) % 2, ph = (s <= c ? h : w) % 2;
  if (ow % 2 != pw) ++ow;
  if (oh % 2 != ph) ++oh;
}

namespace {

class Warp : public Operator {
 public:
  Warp(const OpSpec& spec, bool rotate)
      : Operator(spec), rotate_(rotate), linear_(interp_is_linear(spec)) {
    if (spec.has_arg("fill_value")) fill_ = spec.arg<std::vector<double>>("fill_value");
    if (!rotate_) {
      const bool input = spec.inputs.size() > 1, arg = spec.given("matrix");
      STOKER_ENFORCE(input != arg, ValueError,
                     "warp_affine: give the matrix as the `matrix` "
                     "argument or as the second input (mtx), ",
                     input ? "not both" : "one of them");
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto maps = plan(ws, in, shapes);
    const auto& name = spec_.schema->name;
    Batch& out = add_output(ws, output_dtype(in.dtype()), std::move(shapes), in.layout());
    const std::vector<float> fill = fill_values(in.dtype(), out.dtype());
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      const auto& o = out.shape(i);
      STOKER_ENFORCE(fill.empty() || fill.size() == 1 || int64_t(fill.size()) == s[2], ValueError,
                     name, ": fill_value needs 1 or ", s[2], " values, got ", fill.size());
      kernels::visit_warp_pairs(in.dtype(), out.dtype(), [&](auto in_type, auto out_type) {
        using In = decltype(in_type);
        using Out = decltype(out_type);
        kernels::warp_affine_cpu(in.data_as<const In>(i), s[0], s[1], s[2], out.data_as<Out>(i),
                                 o[0], o[1], maps[size_t(i)], linear_,
                                 fill.empty() ? nullptr : &fill);
      });
    });
  }

 protected:
  // `dtype`, or the input's type; the pairs both backends take (kernels::visit_warp_pairs).
  DType output_dtype(DType input) const {
    STOKER_ENFORCE(kernels::visit_warp_types(input, [](auto) {}), TypeError, spec_.schema->name,
                   " input: unsupported dtype ", dtype_name(input),
                   " (uint8, int16, uint16, int32 or float32)");
    if (!spec_.has_arg("dtype")) return input;
    const DType out = dtype_from_name(spec_.arg<std::string>("dtype"));
    STOKER_ENFORCE(kernels::warp_affine_dtype_supported(input, out), TypeError,
                   spec_.schema->name, ": dtype ", dtype_name(out), " is not supported for ",
                   dtype_name(input),
                   " input (the input's type or float32; from float32 input: uint8, int16, "
                   "uint16, int32 or float32)");
    return out;
  }

  // fill_value as DALI's warps take it: converted to the input's type, then to the output's
  // (rounded half away from zero, saturated): 3.7 is 4 for uint8 input, even into float32.
  std::vector<float> fill_values(DType in, DType out) const {
    std::vector<float> fill;
    for (double v : fill_) {
      float x = float(v);
      for (DType t : {in, out})
        kernels::visit_warp_types(t, [&](auto v) { x = to_float(convert_sat<decltype(v)>(x)); });
      fill.push_back(x);
    }
    return fill;
  }

  // Every sample's map (output centre -> input point) and output shape.
  std::vector<kernels::Affine> plan(Workspace& ws, const Batch& in,
                                    std::vector<TensorShape>& shapes) const {
    const int n = in.size();
    std::vector<kernels::Affine> maps(static_cast<size_t>(n));
    shapes.assign(size_t(n), TensorShape{});
    const auto& name = spec_.schema->name;
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, name);
      int64_t oh = s.height, ow = s.width;
      if (spec_.has_arg("size") || ws.arg_inputs.count("size")) {
        auto size = list_arg(ws, "size", i);
        STOKER_ENFORCE(size.size() == 2 && size[0] > 0 && size[1] > 0, ValueError, name,
                       ": size must be [height, width] of positive values");
        check_arg_elements(name, "size", size, i, double(s.height) * double(s.width));
        oh = int64_t(size[0]), ow = int64_t(size[1]);
      } else if (rotate_ && !spec_.arg<bool>("keep_size")) {
        rotated_canvas(scalar_arg(ws, "angle", i), s.height, s.width, oh, ow);
      }
      shapes[size_t(i)] = TensorShape{oh, ow, s.channels};
      maps[size_t(i)] =
          rotate_ ? rotation(scalar_arg(ws, "angle", i), s.height, s.width, oh, ow) : matrix(ws, i);
      if (!spec_.fused_middle.empty()) mirror(ws, i, s.height, s.width, maps[size_t(i)]);
    });
    return maps;
  }

  // A flip fused into this warp (graph fusion): `map` leads to a point of the flipped image;
  // the point it mirrors in the flip's input is (w - x, y) or (x, h - y) with pixel centres at
  // +0.5, so the rows of the map change sign and shift by the extent.
  void mirror(const Workspace& ws, int i, int64_t h, int64_t w, kernels::Affine& map) const {
    const OpSpec& flip = *spec_.fused_middle[0];
    const ArgInputs& args = fused_args(ws, 0);
    if (scalar_arg(flip, args, "horizontal", i) != 0)
      map = {-map[0], -map[1], double(w) - map[2], map[3], map[4], map[5]};
    if (scalar_arg(flip, args, "vertical", i) != 0)
      map = {map[0], map[1], map[2], -map[3], -map[4], double(h) - map[5]};
  }

  // Output centre to input centre, turned by `angle` degrees counter-clockwise (as displayed).
  static kernels::Affine rotation(double angle, int64_t h, int64_t w, int64_t oh, int64_t ow) {
    const double t = angle * 3.14159265358979323846 / 180, c = std::cos(t), s = std::sin(t);
    const double cx = double(w) / 2, cy = double(h) / 2, ox = double(ow) / 2, oy = double(oh) / 2;
    return {c, -s, cx - ox * c + oy * s, s, c, cy - ox * s - oy * c};
  }

  kernels::Affine matrix(const Workspace& ws, int i) const {
    // The mtx input (transforms.* give [2, 3] tensors) or the argument.
    auto m = ws.inputs.size() > 1 ? sample_as_doubles(ws.input(1), i) : list_arg(ws, "matrix", i);
    STOKER_ENFORCE(m.size() == 6, ValueError, "warp_affine: matrix needs 6 values (2x3), got ",
                   m.size());
    kernels::Affine a{m[0], m[1], m[2], m[3], m[4], m[5]};
    if (spec_.arg<bool>("inverse_map")) return a;
    // The matrix maps input to output: invert it.
    const double det = a[0] * a[4] - a[1] * a[3];
    STOKER_ENFORCE(std::fabs(det) > 1e-12, ValueError, "warp_affine: the matrix is singular");
    const double i00 = a[4] / det, i01 = -a[1] / det, i10 = -a[3] / det, i11 = a[0] / det;
    return {i00, i01, -(i00 * a[2] + i01 * a[5]), i10, i11, -(i10 * a[2] + i11 * a[5])};
  }

  bool rotate_, linear_;
  std::vector<double> fill_;
};

#ifdef STOKER_HAVE_CUDA
class WarpGpu final : public Warp {
 public:
  using Warp::Warp;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const auto& name = spec_.schema->name;
    std::vector<TensorShape> shapes;
    auto maps = plan(ws, in, shapes);
    Batch& out = add_output(ws, output_dtype(in.dtype()), std::move(shapes), in.layout());
    if (n == 0) return;
    const int64_t C = in.shape(0)[2];
    for (int i = 1; i < n; ++i)
      STOKER_ENFORCE(in.shape(i)[2] == C, ValueError, name,
                     " (gpu): every sample needs the same channel count");
    STOKER_ENFORCE(fill_.empty() || fill_.size() == 1 || int64_t(fill_.size()) == C, ValueError,
                   name, ": fill_value needs 1 or ", C, " values, got ", fill_.size());
    STOKER_ENFORCE(fill_.empty() || C <= kernels::kWarpMaxChannels, ValueError, name,
                   " (gpu): fill_value with more than ", kernels::kWarpMaxChannels, " channels");
    const std::vector<float> given = fill_values(in.dtype(), out.dtype());
    std::vector<float> fill;
    for (int64_t c = 0; c < C && !given.empty(); ++c)
      fill.push_back(given[given.size() == 1 ? 0 : size_t(c)]);
    std::vector<kernels::WarpGpuSample> desc(static_cast<size_t>(n));
    // The kernel's tile grid covers the mean output size (see warp_affine_gpu).
    int64_t sum_oh = 0, sum_ow = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i);
      d.h = in.shape(i)[0], d.w = in.shape(i)[1], d.oh = out.shape(i)[0], d.ow = out.shape(i)[1];
      STOKER_ENFORCE(
          std::max(d.w, d.ow) * C < (int64_t(1) << 31) && std::max(d.h, d.oh) < (int64_t(1) << 31),
          ValueError, name, " (gpu): sample ", i, " of ", d.h, "x", d.w, "x", C, " (output ", d.oh,
          "x", d.ow, ") is too large for the kernel's 32-bit rows");
      for (int k = 0; k < 6; ++k) d.m[k] = maps[size_t(i)][size_t(k)];
      sum_oh += d.oh, sum_ow += d.ow;
    }
    const int64_t oh = (sum_oh + n - 1) / n, ow = (sum_ow + n - 1) / n;
    auto device = upload(ws, desc);
    cuda_check(kernels::warp_affine_gpu(
                   static_cast<const kernels::WarpGpuSample*>(device->data()), n, oh, ow, int(C),
                   linear_, fill.empty() ? nullptr : fill.data(), in.dtype(), out.dtype(),
                   ws.stream),
               name + " (gpu): launching the kernel");
  }
};
#endif

std::vector<ArgSchema> warp_args() {
  return {{"size", ArgType::kIntList, "Output [height, width] (default: see above).", std::nullopt,
           true, true},
          {"fill_value", ArgType::kFloatList,
           "Value (one, or per channel) outside the input, taken as the input's type and then "
           "the output's (rounded, saturated; as DALI); unset: the border pixel repeats.",
           std::nullopt, false, true},
          {"interp_type", ArgType::kString, "'linear' (bilinear) or 'nn'.", std::string("linear")},
          {"dtype", ArgType::kDType,
           "The output's type (default: the input's): the input's, float32, or from float32 "
           "input uint8, int16, uint16 or int32 (values interpolated in float, then rounded "
           "and saturated into an integer type).",
           std::nullopt, false, true}};
}

// A flip feeding a bilinear warp becomes part of its map (Warp::mirror): a mirror maps pixel
// centres onto pixel centres, so the composition is exact, and bilinear taps and weights mirror
// with it; nearest-neighbour sampling breaks ties at pixel edges towards one side.
FusionTraits warp_fusion() {
  FusionTraits f;
  f.absorbs_mirror = true;
  f.fusable = [](const OpSpec& sp) {
    try {
      return interp_is_linear(sp);
    } catch (const Error&) {
      return false;  // the operator names the bad value when it is made
    }
  };
  return f;
}

const char* kWarpDoc =
    " Pixel centres at +0.5: output pixel (x, y) samples the input at M * (x + 0.5, y + 0.5, 1) "
    "(bilinear between the four pixels around it, or the pixel containing it for 'nn'); taps "
    "outside take fill_value, or the nearest border pixel when it is unset. uint8, int16, "
    "uint16, int32 (masks of labels; values pass through float32, exact up to 2^24) and float32 "
    "HWC images; integers rounded half away from zero and saturated.";

}  // namespace

OpSchema warp_affine_schema() {
  OpSchema s{
      .name = "warp_affine",
      .doc = std::string("Warps HWC images by a 2x3 affine `matrix` in (x, y) order (the "
                         "argument, or the second input: transforms.* produce it), mapping "
                         "output to input (inverse_map=True) or input to output. Output size: "
                         "`size`, else the input's.") +
             kWarpDoc,
      .inputs = {"images", "mtx"},
      .optional_inputs = 1,
      .host_inputs = 1,
      .outputs = {"images"},
      .args = {optional_arg("matrix", ArgType::kFloatList,
                            "[m00, m01, m02, m10, m11, m12] (or give the mtx input)."),
               {"inverse_map", ArgType::kBool, "The matrix maps output to input.", true}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Warp>(sp, false); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) { return std::make_unique<WarpGpu>(sp, false); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"matrix", std::vector<double>{1, 0, 0, 0, 1, 0}}}},
  };
  for (auto& a : warp_args()) s.args.push_back(a);
  s.fusion = warp_fusion();
  return s;
}

OpSchema rotate_schema() {
  OpSchema s{
      .name = "rotate",
      .doc =
          std::string("Rotates HWC images by `angle` degrees counter-clockwise (as "
                      "displayed) about their centres (the output's centre samples the input's). "
                      "Output size: `size`, the input's with keep_size, else the rotated "
                      "image's bounding box rounded up, plus one where that keeps the parity of "
                      "the input extent it mostly comes from (as DALI).") +
          kWarpDoc,
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"angle", ArgType::kFloat, "Degrees, counter-clockwise.", std::nullopt, true},
               {"keep_size", ArgType::kBool, "Keep the input's size.", false}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Warp>(sp, true); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) { return std::make_unique<WarpGpu>(sp, true); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"angle", 30.0}}},
  };
  for (auto& a : warp_args()) s.args.push_back(a);
  s.fusion = warp_fusion();
  return s;
}

}  // namespace stoker::ops
