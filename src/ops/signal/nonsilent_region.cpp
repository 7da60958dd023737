#include "stoker/ops/signal/nonsilent_region.hpp"

#include <algorithm>
#include <vector>

#include "stoker/kernels/signal/nonsilent_region.hpp"
#include "stoker/kernels/signal/nonsilent_region_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "nonsilent_region";

class NonsilentRegion : public Operator {
 public:
  explicit NonsilentRegion(const OpSpec& spec)
      : Operator(spec),
        cutoff_db_(float(spec.arg<double>("cutoff_db"))),
        reference_(float(spec.arg<double>("reference_power"))),
        window_(spec.arg<int64_t>("window_length")),
        reset_interval_(spec.arg<int64_t>("reset_interval")) {
    STOKER_ENFORCE(window_ > 0, ValueError, kOp, ": window_length must be positive, got ", window_);
    // DALI's loop never ends on 0 or another negative value.
    STOKER_ENFORCE(reset_interval_ == -1 || reset_interval_ > 0, ValueError, kOp,
                   ": reset_interval must be -1 (never) or positive, got ", reset_interval_);
    STOKER_ENFORCE(!spec.has_arg("reference_power") || reference_ > 0, ValueError, kOp,
                   ": reference_power must be positive (leave it unset for the signal's "
                   "maximum power), got ",
                   reference_);
  }

  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    const int n = in.size();
    Batch& begin = add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n)), "");
    Batch& length = add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n)), "");
    for_each_sample(ws, n, [&](int i, int) {
      const int64_t len = in.shape(i)[0];
      std::pair<int64_t, int64_t> region{0, 0};
      if (len > 0) {
        const int64_t window = std::min(window_, len);
        // One buffer per thread, reused: a fresh one per utterance (megabytes) is an mmap,
        // zero-filled pages and their faults, which threads then contend for.
        thread_local std::vector<float> power;
        if (power.size() < size_t(len)) power.resize(size_t(len));
        visit_type(in.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          kernels::moving_mean_square(in.data_as<const T>(i), len, window, reset_interval_,
                                      power.data());
        });
        const float reference =
            spec_.has_arg("reference_power") ? reference_ : kernels::power_max(power.data(), len);
        region = kernels::nonsilent_bounds(
            power.data(), len, kernels::nonsilent_threshold(reference, cutoff_db_), window);
      }
      *begin.data_as<int32_t>(i) = int32_t(region.first);
      *length.data_as<int32_t>(i) = int32_t(region.second);
    });
  }

 protected:
  const Batch& checked_input(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    visit_type(in.dtype(), [](auto) {});
    // DALI checks this for floating-point signals only (integer ones are never reset).
    STOKER_ENFORCE(
        in.dtype() != DType::kF32 || reset_interval_ == -1 || reset_interval_ % window_ == 0,
        ValueError, kOp, ": reset_interval (", reset_interval_,
        ") must be a multiple of window_length (", window_, ")");
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == 1, ValueError, kOp, ": sample ", i, " must be 1-D, got ",
                     in.shape(i).to_string());
    }
    return in;
  }

  // DALI's types: the integers and float32.
  template <typename F>
  static void visit_type(DType d, F&& f) {
    visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                DType::kU64, DType::kI64, DType::kF32>(d, "nonsilent_region input",
                                                       std::forward<F>(f));
  }

  float cutoff_db_, reference_;
  int64_t window_, reset_interval_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the short-term powers into device scratch (one launch), then the reference,
// threshold and region of every sample (a second): nonsilent_region_gpu.hpp.
class NonsilentRegionGpu final : public NonsilentRegion {
 public:
  using NonsilentRegion::NonsilentRegion;
  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    const int n = in.size();
    Batch& begin = add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n)), "");
    Batch& length = add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n)), "");
    if (n == 0) return;
    STOKER_ENFORCE(n <= 65535, ValueError, kOp, " (gpu): batches of at most 65535 samples");
    std::vector<kernels::NonsilentGpuSample> desc(static_cast<size_t>(n));
    int64_t total = 0, most_segments = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data(i);
      d.length = in.shape(i)[0];
      d.window = std::max<int64_t>(std::min(window_, d.length), 1);
      d.mean_factor = 1.f / float(d.window);
      d.segment = kernels::nonsilent_segment(in.dtype(), d.length, d.window, reset_interval_);
      d.begin = begin.data_as<int32_t>(i);
      d.region_length = length.data_as<int32_t>(i);
      total += d.length;
      most_segments = std::max(most_segments, (d.length + d.segment - 1) / d.segment);
    }
    std::shared_ptr<Buffer> power;
    if (total > 0) {
      power = ws.device_pool->acquire_on(size_t(total) * sizeof(float), ws.stream);
      float* next = static_cast<float*>(power->data());
      for (auto& d : desc) d.power = next, next += d.length;
    }
    auto device = upload(ws, desc);
    // reference * factor is the CPU's threshold (nonsilent_threshold), factor = 1 * 10^(...).
    cuda_check(kernels::nonsilent_region_gpu(
                   static_cast<const kernels::NonsilentGpuSample*>(device->data()), n,
                   most_segments, in.dtype(), spec_.has_arg("reference_power"), reference_,
                   kernels::nonsilent_threshold(1.f, cutoff_db_), ws.stream),
               "nonsilent_region (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema nonsilent_region_schema() {
  return {
      .name = "nonsilent_region",
      .doc =
          "The non-silent region of a 1-D audio signal (as DALI): p[i], the mean square of "
          "the window_length samples ending at i, is compared with reference_power (unset: "
          "max p) * 10^(cutoff_db / 10); the outputs are the first sample at or above it, moved "
          "back by window_length - 1 (not before 0), and the length up to the last such "
          "sample; (0, 0) when there is none. int32 scalars. Integer or float32 signals; the "
          "running sum of a float signal restarts every reset_interval samples (-1: never; a "
          "multiple of window_length). The gpu backend gives the cpu backend's outputs (the same "
          "sums in the same float operations and order; a float signal is summed one "
          "reset_interval per GPU thread, so reset_interval=-1 leaves a long signal to one "
          "thread).",
      .inputs = {"input"},
      .outputs = {"begin", "length"},
      .args =
          {{"cutoff_db", ArgType::kFloat, "The silence threshold below the reference (dB).", -60.0},
           {"window_length", ArgType::kInt, "The samples of the short-term power.", int64_t{2048}},
           {"reference_power", ArgType::kFloat,
            "The power of 0 dB (unset: the signal's maximum short-term power).", 0.0},
           {"reset_interval", ArgType::kInt,
            "Samples between exact recomputations of the running sum (-1: never).", int64_t{8192}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<NonsilentRegion>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<NonsilentRegionGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
