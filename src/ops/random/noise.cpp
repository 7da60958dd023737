#include "stoker/ops/random/noise.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "stoker/kernels/random/noise.hpp"
#include "stoker/kernels/random/noise_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::NoiseKind;
using kernels::NoiseSample;

// DALI's shot noise without an explicit `factor` uses its distribution's default, 12, not the
// 20 its schema shows (DALI 2.4: outputs are multiples of 12).
constexpr double kShotFactorUnset = 12.0;

// DALI converts salt_val and pepper_val (floats) to the input type with a C++ cast: truncation
// toward zero, out-of-range values wrapping as x86 does (300 gives 44 in uint8, -7 gives 249).
template <typename T>
uint64_t value_bits(double v) {
  T t;
  if constexpr (std::is_floating_point_v<T>) {
    t = T(float(v));
  } else {
    const double f = double(float(v));
    t = f == f ? T(int64_t(std::clamp(f, -9.2e18, 9.2e18))) : T(0);
  }
  uint64_t bits = 0;
  std::memcpy(&bits, &t, sizeof(T));
  return bits;
}

template <typename T>
uint64_t default_salt() {
  if constexpr (std::is_floating_point_v<T>) return value_bits<T>(1.0);
  T t = std::numeric_limits<T>::max();
  uint64_t bits = 0;
  std::memcpy(&bits, &t, sizeof(T));
  return bits;
}
template <typename T>
uint64_t default_pepper() {
  if constexpr (std::is_floating_point_v<T>) return value_bits<T>(-1.0);
  T t = std::numeric_limits<T>::min();
  uint64_t bits = 0;
  std::memcpy(&bits, &t, sizeof(T));
  return bits;
}

template <typename F>
decltype(auto) visit_noise_type(DType d, const std::string& op, F&& f) {
  STOKER_ENFORCE(kernels::noise_supports(d), TypeError, op, ": input type ", dtype_name(d),
                 " is not supported (uint8, int8, uint16, int16, uint32, int32, uint64, int64, "
                 "float32, as DALI)");
  return visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                     DType::kU64, DType::kI64, DType::kF32>(d, op, std::forward<F>(f));
}

class Noise : public Operator {
 public:
  Noise(const OpSpec& spec, NoiseKind kind) : Operator(spec), kind_(kind) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
    const auto desc = describe(ws, in, out);
    for_each_sample(ws, in.size(),
                    [&](int i, int) { kernels::noise_cpu(kind_, desc[size_t(i)], in.dtype()); });
  }

 protected:
  // Every sample's descriptor: its arguments checked, its key drawn, its draw units laid out.
  std::vector<NoiseSample> describe(Workspace& ws, const Batch& in, const Batch& out) const {
    const std::string& op = spec_.schema->name;
    std::vector<NoiseSample> desc(size_t(in.size()));
    visit_noise_type(in.dtype(), op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for_each_sample(ws, in.size(), [&](int i, int) {
        NoiseSample& s = desc[size_t(i)];
        s.in = in.data(i), s.out = out.data(i);
        s.units = in.shape(i).volume();
        auto rng = sample_rng(ws, i);
        s.key0 = rng.next_u32(), s.key1 = rng.next_u32();
        if (kind_ == NoiseKind::kGaussian) {
          const double mean = scalar_arg(ws, "mean", i), stddev = scalar_arg(ws, "stddev", i);
          STOKER_ENFORCE(stddev >= 0, ValueError, op, ": stddev must be >= 0, got ", stddev);
          s.p0 = float(mean), s.p1 = float(stddev);
        } else if (kind_ == NoiseKind::kSaltAndPepper) {
          salt_and_pepper(ws, in, i, s);
          s.salt = spec_.given("salt_val") ? value_bits<T>(scalar_arg(ws, "salt_val", i))
                                           : default_salt<T>();
          s.pepper = spec_.given("pepper_val") ? value_bits<T>(scalar_arg(ws, "pepper_val", i))
                                               : default_pepper<T>();
        } else {
          const double factor =
              spec_.given("factor") ? scalar_arg(ws, "factor", i) : kShotFactorUnset;
          s.p0 = float(factor), s.p1 = 1.0f / s.p0;
        }
      });
    });
    return desc;
  }

  // prob, salt_vs_pepper, and the draw units: pixels (the elements along the channel axis share a
  // draw) unless per_channel. The channel axis: the layout's C, which must be the first or the last
  // axis (as DALI); the last axis when there is no layout; none in a layout without C (HW: each
  // element a pixel, where DALI fails).
  void salt_and_pepper(const Workspace& ws, const Batch& in, int i, NoiseSample& s) const {
    const std::string& op = spec_.schema->name;
    const double prob = scalar_arg(ws, "prob", i), svp = scalar_arg(ws, "salt_vs_pepper", i);
    STOKER_ENFORCE(prob >= 0 && prob <= 1, ValueError, op, ": prob must be in [0, 1], got ", prob);
    STOKER_ENFORCE(svp >= 0 && svp <= 1, ValueError, op, ": salt_vs_pepper must be in [0, 1], got ",
                   svp);
    s.p0 = float(prob), s.p1 = float(prob) * float(svp);
    if (spec_.arg<bool>("per_channel")) return;
    const TensorShape& shape = in.shape(i);
    const int ndim = shape.ndim();
    int axis = in.layout().empty() ? ndim - 1 : in.layout().find('C');
    STOKER_ENFORCE(axis < 0 || axis == 0 || axis == ndim - 1, ValueError, op,
                   ": 'C' must be the first or the last axis of the layout, got '",
                   in.layout().str(), "'");
    if (axis < 0 || shape[axis] == 0) return;
    s.channels = shape[axis];
    for (int d = axis + 1; d < ndim; ++d) s.inner *= shape[d];
    s.units /= s.channels;
  }

  NoiseKind kind_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the descriptors (keys drawn on the host from the same streams) go up in one
// copy, and one launch covers the batch, computing what the CPU kernel would.
class NoiseGpu final : public Noise {
 public:
  using Noise::Noise;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
    auto all = describe(ws, in, out);
    std::vector<NoiseSample> desc;
    int64_t most = 0;
    for (const auto& s : all) {
      if (s.units == 0) continue;
      desc.push_back(s);
      most = std::max(most, s.units);
    }
    if (desc.empty()) return;
    const std::string what = spec_.schema->name + " (gpu): launching the kernel";
    for (size_t first = 0; first < desc.size(); first += 65535) {  // the grid's y limit
      std::vector<NoiseSample> part(desc.begin() + ptrdiff_t(first),
                                    desc.begin() + ptrdiff_t(std::min(desc.size(), first + 65535)));
      auto device = upload(ws, part);
      cuda_check(kernels::noise_gpu(kind_, static_cast<const NoiseSample*>(device->data()),
                                    int(part.size()), most, in.dtype(), ws.stream),
                 what);
    }
  }
};
#endif

template <NoiseKind kKind>
OpSchema::Factory cpu_factory() {
  return [](const OpSpec& s) { return std::make_unique<Noise>(s, kKind); };
}
template <NoiseKind kKind>
OpSchema::Factory gpu_factory() {
#ifdef STOKER_HAVE_CUDA
  return [](const OpSpec& s) { return std::make_unique<NoiseGpu>(s, kKind); };
#else
  return {};
#endif
}

constexpr const char* kSameTypes =
    " The output has the input's shape, layout and type (uint8, int8, uint16, int16, uint32, "
    "int32, uint64, int64 or float32); integers are rounded half away from zero and saturated. "
    "Draws come from the sample's own counter-based stream (a pure function of the seed, the "
    "operator and the sample's index), so the cpu and gpu backends give the same values.";

}  // namespace

OpSchema gaussian_noise_schema() {
  return {
      .name = "noise.gaussian",
      .doc = std::string("Adds normal noise of `mean` and `stddev` to every element, as DALI: in "
                         "float32 for the 8- and 16-bit types and float32, in double for the 32- "
                         "and 64-bit integers.") +
             kSameTypes,
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"mean", ArgType::kFloat, "Mean of the distribution.", 0.0, true},
               {"stddev", ArgType::kFloat, "Standard deviation of the distribution (>= 0).", 1.0,
                true}},
      .random = true,
      .make_cpu = cpu_factory<NoiseKind::kGaussian>(),
      .make_gpu = gpu_factory<NoiseKind::kGaussian>(),
      .example = OpExample{},
  };
}

OpSchema salt_and_pepper_noise_schema() {
  return {
      .name = "noise.salt_and_pepper",
      .doc = std::string(
                 "Replaces values by `salt_val` or `pepper_val` with probability `prob`, as DALI: "
                 "a corrupted value is salt with probability `salt_vs_pepper`. Without "
                 "`per_channel`, one draw per pixel decides for all its channels (the layout's C "
                 "axis, which must be first or last; the last axis when there is no layout; "
                 "none in a layout without C, where each element is a pixel).") +
             kSameTypes,
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"prob", ArgType::kFloat,
                "Probability of an output value to take a salt or pepper value ([0, 1]).", 0.05,
                true},
               {"salt_vs_pepper", ArgType::kFloat,
                "Probability of a corrupted output value to take the salt value ([0, 1]).", 0.5,
                true},
               optional_arg("salt_val", ArgType::kFloat,
                            "Value of salt (default: 1.0 for float32, else the type's maximum), "
                            "converted to the input type as DALI (truncated)."),
               optional_arg("pepper_val", ArgType::kFloat,
                            "Value of pepper (default: -1.0 for float32, else the type's "
                            "minimum), converted to the input type as DALI (truncated)."),
               {"per_channel", ArgType::kBool,
                "Draw for each channel on its own (True), or once per pixel for all its "
                "channels.",
                false}},
      .random = true,
      .make_cpu = cpu_factory<NoiseKind::kSaltAndPepper>(),
      .make_gpu = gpu_factory<NoiseKind::kSaltAndPepper>(),
      .example = OpExample{},
  };
}

OpSchema shot_noise_schema() {
  return {
      .name = "noise.shot",
      .doc =
          std::string("Shot (Poisson) noise, as DALI: output = poisson(max(0, input / factor)) * "
                      "factor, in float32. Left unset, `factor` is 12 (what DALI 2.4 uses then, "
                      "whatever its documented 20); a factor of 0 gives zeros, as DALI 2.4 (its "
                      "documentation promises the input). Poisson draws: inversion below a mean of "
                      "10, Hörmann's PTRS above, a rounded normal above 1e10.") +
          kSameTypes,
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"factor", ArgType::kFloat,
                "The value one event adds (larger: noisier); unset: 12, as DALI 2.4.", 20.0, true}},
      .random = true,
      .make_cpu = cpu_factory<NoiseKind::kShot>(),
      .make_gpu = gpu_factory<NoiseKind::kShot>(),
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
