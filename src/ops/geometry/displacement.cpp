// water and sphere (CPU and GPU): per-sample descriptors (water's per-row and per-column offsets
// computed on the host once), then one kernel per image on the CPU or one launch per batch.
#include "stoker/ops/geometry/displacement.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include "stoker/kernels/geometry/displacement_cpu.hpp"
#include "stoker/kernels/geometry/displacement_gpu.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::DisplaceMap;
using kernels::DisplaceSample;

// DALI stores the fill value in the input type by a plain C++ conversion, which x86 makes a
// truncation to int32 (INT_MIN out of its range) and then the low byte for uint8: 300.7 fills
// with 44, -1 with 255, 1e10 with 0. Kept for identical borders.
float fill_as(DType t, double fill) {
  if (t == DType::kF32) return float(fill);
  const float f = float(fill);
  const int32_t v = f > -2147483648.f && f < 2147483648.f ? int32_t(f) : INT32_MIN;
  return float(uint8_t(uint32_t(v)));
}

class Displace : public Operator {
 public:
  Displace(const OpSpec& spec, DisplaceMap map)
      : Operator(spec), map_(map), linear_(interp_is_linear(spec)) {
    fill_ = spec.arg<double>("fill_value");
    if (map_ == DisplaceMap::kWater)
      for (const char* axis : {"x", "y"}) {
        wave_.push_back(float(spec.arg<double>(std::string("ampl_") + axis)));
        wave_.push_back(float(spec.arg<double>(std::string("freq_") + axis)));
        wave_.push_back(float(spec.arg<double>(std::string("phase_") + axis)));
      }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    auto shapes = plan(ws, in);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), in.layout());
    const float fill = fill_as(in.dtype(), fill_);
    for_each_sample(ws, n, [&](int i, int) {
      std::vector<float> tables;
      DisplaceSample s = sample(ws, in, out, i, fill, tables);
      if (tables.size()) s.dx = tables.data(), s.dy = tables.data() + s.h;
      if (in.dtype() == DType::kU8)
        kernels::displace_cpu<uint8_t>(s, in.shape(i)[2], map_, linear_);
      else
        kernels::displace_cpu<float>(s, in.shape(i)[2], map_, linear_);
    });
  }

 protected:
  // Checks the batch (uint8 or float32 HWC images, as DALI) and gives the output shapes.
  std::vector<TensorShape> plan(const Workspace& ws, const Batch& in) const {
    const auto& name = spec_.schema->name;
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kF32, TypeError, name,
                   ": expected uint8 or float32 images, got ", dtype_name(in.dtype()));
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      auto s = image_shape(in, i, name);
      STOKER_ENFORCE(s.height < (int64_t(1) << 30) && s.width < (int64_t(1) << 30), ValueError,
                     name, ": sample ", i, " of ", s.height, "x", s.width,
                     " is larger than 2^30 pixels on a side");
      shapes.push_back(in.shape(i));
    }
    (void)ws;
    return shapes;
  }

  // Sample i's descriptor; water's offsets (h row offsets, then w column offsets) go to `tables`.
  DisplaceSample sample(const Workspace& ws, const Batch& in, const Batch& out, int i, float fill,
                        std::vector<float>& tables) const {
    DisplaceSample s;
    s.in = in.data(i), s.out = out.data(i);
    s.h = in.shape(i)[0], s.w = in.shape(i)[1];
    s.fill = fill;
    s.apply = scalar_arg(ws, "mask", i) != 0;
    if (map_ == DisplaceMap::kWater && s.apply) {
      tables.resize(size_t(s.h + s.w));
      kernels::water_offsets(wave_[0], wave_[1], wave_[2], false, s.h, tables.data());
      kernels::water_offsets(wave_[3], wave_[4], wave_[5], true, s.w, tables.data() + s.h);
    }
    return s;
  }

  DisplaceMap map_;
  bool linear_;
  double fill_ = 0;
  std::vector<float> wave_;  // water: ampl, freq, phase of x, then of y
};

#ifdef STOKER_HAVE_CUDA
class DisplaceGpu final : public Displace {
 public:
  using Displace::Displace;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const auto& name = spec_.schema->name;
    auto shapes = plan(ws, in);
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), in.layout());
    if (n == 0) return;
    const int64_t C = in.shape(0)[2];
    for (int i = 1; i < n; ++i)
      STOKER_ENFORCE(in.shape(i)[2] == C, ValueError, name,
                     " (gpu): every sample needs the same channel count; sample ", i, " has ",
                     in.shape(i)[2], ", sample 0 ", C);
    const float fill = fill_as(in.dtype(), fill_);
    std::vector<DisplaceSample> desc(static_cast<size_t>(n));
    std::vector<float> tables, one;
    std::vector<size_t> at(static_cast<size_t>(n), SIZE_MAX);
    int64_t sum_h = 0, sum_w = 0;
    for (int i = 0; i < n; ++i) {
      desc[size_t(i)] = sample(ws, in, out, i, fill, one);
      if (!one.empty())
        at[size_t(i)] = tables.size(), tables.insert(tables.end(), one.begin(), one.end());
      one.clear();
      sum_h += desc[size_t(i)].h, sum_w += desc[size_t(i)].w;
    }
    std::shared_ptr<Buffer> device_tables;
    if (!tables.empty()) {
      device_tables = upload(ws, tables);
      const float* base = static_cast<const float*>(device_tables->data());
      for (int i = 0; i < n; ++i)
        if (at[size_t(i)] != SIZE_MAX)
          desc[size_t(i)].dx = base + at[size_t(i)],
          desc[size_t(i)].dy = base + at[size_t(i)] + desc[size_t(i)].h;
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::displace_gpu(static_cast<const DisplaceSample*>(device->data()), n,
                                     (sum_h + n - 1) / n, (sum_w + n - 1) / n, int(C), map_,
                                     linear_, in.dtype(), ws.stream),
               name + " (gpu): launching the kernel");
  }
};
#endif

std::vector<ArgSchema> displace_args() {
  return {{"fill_value", ArgType::kFloat,
           "Value of the output where the source point is outside the image (stored in the input "
           "type as DALI does: truncated, modulo 256 for uint8).",
           0.0},
          {"interp_type", ArgType::kString, "'nn' (nearest) or 'linear' (bilinear).",
           std::string("nn")},
          {"mask", ArgType::kInt,
           "Per sample: 1 applies the augmentation, 0 passes the image through unchanged.",
           int64_t{1}, true}};
}

const char* kDisplaceDoc =
    " Source coordinates have their origin at the top-left corner of the top-left pixel: "
    "nearest takes the pixel containing the point, linear interpolates between the four pixel "
    "centres around it; points outside the image take fill_value. uint8 and float32 HWC images; "
    "linear results rounded half away from zero and saturated.";

OpSchema displace_schema(std::string name, std::string doc, DisplaceMap map,
                         std::vector<ArgSchema> args) {
  OpSchema s{
      .name = std::move(name),
      .doc = std::move(doc) + kDisplaceDoc,
      .inputs = {"images"},
      .outputs = {"images"},
      .args = std::move(args),
      .make_cpu = [map](const OpSpec& sp) { return std::make_unique<Displace>(sp, map); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [map](const OpSpec& sp) { return std::make_unique<DisplaceGpu>(sp, map); },
#endif
      .example = OpExample{},
  };
  for (auto& a : displace_args()) s.args.push_back(a);
  return s;
}

}  // namespace

OpSchema water_schema() {
  std::vector<ArgSchema> args;
  for (const char* axis : {"x", "y"}) {
    const std::string a = axis;
    args.push_back({"ampl_" + a, ArgType::kFloat, "Amplitude of the wave in " + a + ".", 10.0});
    args.push_back({"freq_" + a, ArgType::kFloat,
                    "Frequency of the wave in " + a + " (default 2 pi / 128).",
                    2 * 3.14159265358979323846 / 128});
    args.push_back({"phase_" + a, ArgType::kFloat, "Phase of the wave in " + a + ".", 0.0});
  }
  return displace_schema(
      "water",
      "Makes HWC images look under water (as DALI's water): output pixel (x, y) samples the "
      "input at (x + ampl_x sin(freq_x y + phase_x), y + ampl_y cos(freq_y x + phase_y)), x and "
      "y the pixel's integer indices.",
      DisplaceMap::kWater, std::move(args));
}

OpSchema sphere_schema() {
  return displace_schema(
      "sphere",
      "Bulges HWC images as if seen on a sphere (as DALI's sphere): with m the image centre, "
      "t = (x + 0.5, y + 0.5) - m the offset of output pixel (x, y) and d = max(w, h) / 2 "
      "truncated to an integer, the pixel samples the input at m + t |t| / d (a 1x1 image, d = "
      "0, takes fill_value).",
      DisplaceMap::kSphere, {});
}

}  // namespace stoker::ops
