#include "stoker/ops/signal/audio_resample.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "stoker/kernels/signal/resample.hpp"
#include "stoker/kernels/signal/resample_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "audio_resample";

// DALI's AUDIO_RESAMPLE_TYPES, for the input and the output.
bool resample_type(DType d) {
  return d == DType::kI8 || d == DType::kU8 || d == DType::kI16 || d == DType::kU16 ||
         d == DType::kI32 || d == DType::kU32 || d == DType::kF32;
}
bool is_unsigned(DType d) { return d == DType::kU8 || d == DType::kU16 || d == DType::kU32; }

// DALI reads its rates and scale as float32.
double as_float(double v) { return double(float(v)); }

class AudioResample : public Operator {
 public:
  explicit AudioResample(const OpSpec& spec) : Operator(spec) {
    const bool rates = spec.given("in_rate"), scale = spec.given("scale"),
               length = spec.given("out_length");
    STOKER_ENFORCE(rates == spec.given("out_rate"), ValueError, kOp,
                   ": in_rate and out_rate must be given together");
    STOKER_ENFORCE(int(rates) + int(scale) + int(length) <= 1, ValueError, kOp,
                   ": the sampling rates, scale and out_length cannot be used together");
    STOKER_ENFORCE(rates || scale || length, ValueError, kOp,
                   ": no resampling factor given; give scale, out_length, or in_rate and "
                   "out_rate");
    const double quality = as_float(spec.arg<double>("quality"));
    STOKER_ENFORCE(quality >= 0 && quality <= 100, ValueError, kOp,
                   ": quality must be in [0, 100], got ", quality);
    const int lobes = kernels::resample_lobes(quality);
    window_ = kernels::make_resample_window(lobes, kernels::resample_lookup_size(lobes));
    if (spec.has_arg("dtype")) {
      dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
      STOKER_ENFORCE(resample_type(*dtype_), TypeError, kOp, ": dtype must be int8, uint8, int16, ",
                     "uint16, int32, uint32 or float32, got ", dtype_name(*dtype_));
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const DType out_type = out_dtype(in);
    std::vector<Plan> plans;
    Batch& out = add_planned_output(ws, in, out_type, plans);
    const int n = in.size();
    for_each_sample(ws, n, [&](int i, int) {
      const Plan& p = plans[size_t(i)];
      const TensorShape& s = in.shape(i);
      const int64_t frames = s[0];
      const int channels = s.ndim() > 1 ? int(s[1]) : 1;
      // Floats are read in place unless the output is unsigned (then shifted to 0..1).
      std::vector<float> converted;
      const float* floats = in.dtype() == DType::kF32 && !is_unsigned(out_type)
                                ? in.data_as<float>(i)
                                : (converted = to_floats(in, i, out_type)).data();
      visit_dtype<DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kU32,
                  DType::kF32>(out_type, kOp, [&](auto tag) {
        using T = typename decltype(tag)::type;
        kernels::resample_cpu(out.data_as<T>(i), p.out_length, p.out_rate, floats, frames,
                              p.in_rate, channels, window_);
      });
    });
  }

 protected:
  struct Plan {
    double in_rate = 1, out_rate = 1;
    int64_t out_length = 0;
  };

  Plan plan(const Workspace& ws, const Batch& in, int i) const {
    const TensorShape& s = in.shape(i);
    STOKER_ENFORCE(s.ndim() == 1 || s.ndim() == 2, ValueError, kOp,
                   ": expected a signal of shape (samples) or (samples, channels), got ", s.ndim(),
                   " dimensions");
    const int64_t length = s[0];
    // Positions within the signal are ints in the kernel (as DALI's).
    STOKER_ENFORCE(length < (int64_t(1) << 31) - 256, ValueError, kOp, ": a signal of ", length,
                   " samples is too long (at most 2^31 - 257)");
    Plan p;
    const char* arg = "scale";
    if (spec_.given("in_rate")) {
      arg = "in_rate and out_rate";
      p.in_rate = as_float(scalar_arg(ws, "in_rate", i));
      p.out_rate = as_float(scalar_arg(ws, "out_rate", i));
      STOKER_ENFORCE(p.in_rate > 0, ValueError, kOp, ": in_rate must be positive, got ", p.in_rate);
      STOKER_ENFORCE(p.out_rate >= 0, ValueError, kOp, ": out_rate must be non-negative, got ",
                     p.out_rate);
      check_length(kernels::resampled_frames(length, p.in_rate, p.out_rate), arg, s, i);
    } else if (spec_.given("scale")) {
      p.out_rate = as_float(scalar_arg(ws, "scale", i));
      STOKER_ENFORCE(p.out_rate >= 0, ValueError, kOp, ": scale must be non-negative, got ",
                     p.out_rate);
      check_length(kernels::resampled_frames(length, 1, p.out_rate), arg, s, i);
    } else {
      const double requested = scalar_arg(ws, "out_length", i);
      STOKER_ENFORCE(requested >= 0, ValueError, kOp, ": out_length must be non-negative, got ",
                     requested);
      check_length(requested, "out_length", s, i);
      const auto out_length = int64_t(requested);
      STOKER_ENFORCE(length > 0 || out_length == 0, ValueError, kOp, ": cannot make a signal of ",
                     out_length, " samples from an empty input");
      p.in_rate = length ? double(length) : 1.0;
      p.out_rate = out_length ? double(out_length) : 1.0;
    }
    p.out_length = kernels::resampled_length(length, p.in_rate, p.out_rate);
    return p;
  }

  // An output of `frames` frames (a double: a huge ratio overflows int64) is bounded as every
  // size-setting argument is (arg_limits.hpp), before it is allocated.
  // The output type, after checking the input's.
  DType out_dtype(const Batch& in) const {
    STOKER_ENFORCE(resample_type(in.dtype()), TypeError, kOp,
                   ": the input must be int8, uint8, int16, uint16, int32, uint32 or float32, "
                   "got ",
                   dtype_name(in.dtype()));
    return dtype_.value_or(in.dtype());
  }

  // Every sample's plan (into `plans`) and the output they make.
  Batch& add_planned_output(Workspace& ws, const Batch& in, DType out_type,
                            std::vector<Plan>& plans) const {
    const int n = in.size();
    plans.assign(static_cast<size_t>(n), Plan{});
    for_each_sample(ws, n, [&](int i, int) { plans[size_t(i)] = plan(ws, in, i); });
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      TensorShape s = in.shape(i);
      if (s.ndim() == 1 || s.ndim() == 2)
        s[0] = plans[size_t(i)].out_length;
      else
        s = TensorShape{0};  // a sample refused (and skipped, with on_error="skip")
      shapes.push_back(std::move(s));
    }
    return add_output(ws, out_type, std::move(shapes), in.layout());
  }

  static void check_length(double frames, const char* arg, const TensorShape& s, int i) {
    // In int64 for the message, capped at 2^62 (still refused: far above the limit).
    std::vector<int64_t> dims{int64_t(std::min(frames, 0x1p62))};
    if (s.ndim() > 1) dims.push_back(s[1]);
    check_arg_elements(kOp, arg, dims, i, double(s.volume()));
  }

  // The input as DALI's kernel reads it: float in -1..1 (0..1 when the output is unsigned;
  // unsigned inputs are centred when the output is signed). Floats pass unchanged unless the
  // output is unsigned.
  static std::vector<float> to_floats(const Batch& in, int i, DType out_type) {
    const int64_t count = in.shape(i).volume();
    std::vector<float> f(static_cast<size_t>(count));
    const bool out_unsigned = is_unsigned(out_type);
    visit_dtype<DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kU32,
                DType::kF32>(in.dtype(), kOp, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data_as<T>(i);
      for (int64_t k = 0; k < count; ++k)
        f[size_t(k)] = kernels::resample_input(src[k], out_unsigned);
    });
    return f;
  }

  std::optional<DType> dtype_;
  kernels::ResampleWindow window_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the CPU's plans (per-sample ratios read on the host), the window's table
// copied to the device once (again only if the pipeline's device pool changes), one launch for
// the batch (and one before it converting the input to floats, where the CPU converts).
class AudioResampleGpu final : public AudioResample {
 public:
  using AudioResample::AudioResample;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const DType out_type = out_dtype(in);
    std::vector<Plan> plans;
    Batch& out = add_planned_output(ws, in, out_type, plans);
    const int n = in.size();
    if (n == 0) return;
    STOKER_ENFORCE(n <= 65535, ValueError, kOp, " (gpu): batches of at most 65535 samples");
    const bool convert = in.dtype() != DType::kF32 || is_unsigned(out_type);
    std::vector<kernels::AudioResampleGpuSample> desc(static_cast<size_t>(n));
    int64_t most_in = 0, most_out = 0, floats = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t length = plans[size_t(i)].out_length;
      if (length == 0) continue;  // nothing to make (or a sample refused)
      const TensorShape& s = in.shape(i);
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i);
      d.in_length = s[0], d.out_length = length;
      d.channels = s.ndim() > 1 ? int32_t(s[1]) : 1;
      d.scale = plans[size_t(i)].in_rate / plans[size_t(i)].out_rate;
      most_in = std::max(most_in, s.volume());
      most_out = std::max(most_out, length);
      floats += convert ? s.volume() : 0;
    }
    if (most_out == 0) return;
    if (!device_window_ || window_pool_ != ws.device_pool) {
      device_window_ = upload(ws, window_.lookup);
      window_pool_ = ws.device_pool;
    }
    std::shared_ptr<Buffer> scratch;
    if (floats > 0) {
      scratch = ws.device_pool->acquire_on(size_t(floats) * sizeof(float), ws.stream);
      float* next = static_cast<float*>(scratch->data());
      for (auto& d : desc) {
        if (d.out_length == 0) continue;
        d.floats = next;
        next += d.in_length * d.channels;
      }
    }
    const kernels::AudioResampleGpuWindow window{static_cast<const float*>(device_window_->data()),
                                                 int32_t(window_.lookup.size()), window_.scale,
                                                 window_.center, window_.lobes};
    auto device = upload(ws, desc);
    cuda_check(kernels::audio_resample_gpu(
                   static_cast<const kernels::AudioResampleGpuSample*>(device->data()), n, most_in,
                   most_out, in.dtype(), out_type, window, ws.stream),
               "audio_resample (gpu): launching the kernels");
  }

 private:
  std::shared_ptr<Buffer> device_window_;
  const void* window_pool_ = nullptr;
};
#endif

ArgSchema rate_arg(const char* name, const char* doc) {
  return optional_arg(name, ArgType::kFloat, doc);
}

}  // namespace

OpSchema audio_resample_schema() {
  return {
      .name = "audio_resample",
      .doc =
          "Resamples audio signals (as DALI's): a sinc filter under a Hann window, read from a "
          "table with linear interpolation, 2 * lobes input samples per output (`quality` sets "
          "the lobes). A sample is (samples) or (samples, channels), its channels resampled "
          "alike; its length becomes ceil(length * out_rate / in_rate). The ratio comes from "
          "in_rate and out_rate, or scale, or out_length (out_length / length). Samples are "
          "filtered as floats: integers normalised to -1..1 (0..1 for unsigned), and the result "
          "scaled back to the output type with rounding and saturation; between signed and "
          "unsigned types 0 maps to the middle of the unsigned range. The same float "
          "operations as DALI 2.4's CPU kernel, so the outputs are the same. The gpu backend "
          "gives the cpu backend's outputs bit for bit (the same float operations in the same "
          "order), so DALI's CPU ones; DALI's GPU kernel steps its output positions otherwise and "
          "fuses products into sums: its outputs move from its CPU kernel's by up to ~2e-3 of "
          "full scale on broadband signals.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args =
          {rate_arg("in_rate",
                    "The input's sampling rate (any unit; with out_rate, not with scale or "
                    "out_length)."),
           rate_arg("out_rate",
                    "The output's sampling rate, in in_rate's unit (with in_rate); 0 gives an "
                    "empty output."),
           rate_arg("scale",
                    "Output samples per input sample (scale=2 doubles the length); not with the "
                    "rates or out_length."),
           optional_arg("out_length", ArgType::kInt,
                        "The output's length in samples (the ratio is out_length / length); not "
                        "with the rates or scale."),
           {"quality", ArgType::kFloat,
            "0 to 100: the filter's half-width in input samples, lobes = round(0.007 q^2 - 0.09 q "
            "+ 3): 3 at 0, 16 at 50, 64 at 100.",
            50.0},
           optional_arg("dtype", ArgType::kDType,
                        "The output type (int8, uint8, int16, uint16, int32, uint32 or float32; "
                        "default: the input's). Integers are scaled to fill their range; floats "
                        "are taken as -1..1.",
                        false)},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<AudioResample>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<AudioResampleGpu>(s); },
#endif
      .example = OpExample{.args = {{"scale", 2.0}}, .dtype = "float32", .layout = ""},
      .deprecated_names = {"experimental.audio_resample"},
  };
}

}  // namespace stoker::ops
