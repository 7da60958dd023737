#include "stoker/ops/signal/spectrogram.hpp"

#include <algorithm>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "stoker/kernels/signal/stft.hpp"
#include "stoker/kernels/signal/stft_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "spectrogram";

class Spectrogram : public Operator {
 public:
  explicit Spectrogram(const OpSpec& spec) : Operator(spec) {
    stft_.window_length = spec.arg<int64_t>("window_length");
    stft_.window_step = spec.arg<int64_t>("window_step");
    STOKER_ENFORCE(stft_.window_length > 0, ValueError, kOp,
                   ": window_length must be positive, got ", stft_.window_length);
    STOKER_ENFORCE(stft_.window_step > 0, ValueError, kOp, ": window_step must be positive, got ",
                   stft_.window_step);
    const bool nfft_given = spec.has_arg("nfft");
    nfft_ = nfft_given ? spec.arg<int64_t>("nfft") : stft_.window_length;
    STOKER_ENFORCE(stft_.window_length <= nfft_, ValueError, kOp, ": window_length (",
                   stft_.window_length, ") must not be larger than nfft (", nfft_, ")");
    STOKER_ENFORCE(nfft_ <= kernels::kMaxFftSize, ValueError, kOp, ": ",
                   nfft_given ? "nfft" : "window_length (the FFT's size when nfft is not given)",
                   " must be at most ", kernels::kMaxFftSize, ", got ", nfft_);
    stft_.power = int(spec.arg<int64_t>("power"));
    STOKER_ENFORCE(stft_.power == 1 || stft_.power == 2, ValueError, kOp,
                   ": power must be 1 (magnitude) or 2 (power), got ", stft_.power);
    const auto layout = spec.arg<std::string>("layout");
    STOKER_ENFORCE(layout == "ft" || layout == "tf", ValueError, kOp,
                   ": layout must be 'ft' or 'tf', got '", layout, "'");
    stft_.time_major = layout == "tf";
    if (!spec.arg<bool>("center_windows")) {
      stft_.padding = kernels::StftPadding::kNone;
    } else {
      stft_.padding = spec.arg<bool>("reflect_padding") ? kernels::StftPadding::kReflect
                                                        : kernels::StftPadding::kZero;
    }
    const auto window_fn = spec.arg<std::vector<double>>("window_fn");
    if (window_fn.empty()) {
      window_.resize(static_cast<size_t>(stft_.window_length));
      kernels::hann_window(window_.data(), stft_.window_length);
    } else {
      STOKER_ENFORCE(int64_t(window_fn.size()) == stft_.window_length, ValueError, kOp,
                     ": window_fn must hold window_length (", stft_.window_length, ") values, got ",
                     window_fn.size());
      window_.assign(window_fn.begin(), window_fn.end());
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_checked_output(ws, in);
    const int64_t bins = nfft_ / 2 + 1;
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::RealFft fft(nfft_);
      std::vector<float> frame(static_cast<size_t>(stft_.window_length));
      std::vector<std::complex<float>> spectrum(static_cast<size_t>(bins));
      kernels::stft_cpu(stft_, in.data_as<const float>(i), in.shape(i).volume(), window_.data(),
                        fft, frame.data(), spectrum.data(), out.data_as<float>(i));
    });
  }

 protected:
  // The output of the windows of every sample, after checking the input.
  Batch& add_checked_output(Workspace& ws, const Batch& in) const {
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError, kOp, ": the signal must be float32, got ",
                   dtype_name(in.dtype()));
    const int64_t bins = nfft_ / 2 + 1;
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      const int64_t n = s.volume();
      for (int d = 0; d < s.ndim(); ++d) {
        STOKER_ENFORCE(s[d] == 1 || s[d] == n, ValueError, kOp, ": sample ", i,
                       " must be 1-D (or have every extent but one 1), got ", s.to_string());
      }
      STOKER_ENFORCE(n > 0, ValueError, kOp, ": sample ", i, " is empty");
      const int64_t windows = kernels::stft_windows(stft_, n);
      STOKER_ENFORCE(windows > 0, ValueError, kOp, ": sample ", i, " has ", n,
                     " values, too few for one window of ", stft_.window_length,
                     " (center_windows=False)");
      shapes.push_back(stft_.time_major ? TensorShape{windows, bins} : TensorShape{bins, windows});
      check_arg_elements(kOp, "nfft, window_length and window_step", shapes.back().dims(), i);
    }
    return add_output(ws, DType::kF32, std::move(shapes), stft_.time_major ? "tf" : "ft");
  }

  kernels::Stft stft_;
  int64_t nfft_ = 0;
  std::vector<float> window_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend (kernels/signal/stft_gpu.hpp): the windows of the whole batch cut into rows
// of nfft floats, cuFFT's batched FFTs over them (plans kept by the operator, work areas from
// the device pool), the bins into the outputs. The window function is copied to the device
// once (again only if the pipeline's device pool changes).
class SpectrogramGpu final : public Spectrogram {
 public:
  using Spectrogram::Spectrogram;
  void run(Workspace& ws) override {
    const std::string why = kernels::cufft_unavailable();
    STOKER_ENFORCE(why.empty(), RuntimeError, kOp, " (gpu): cuFFT cannot be used: ", why);
    const Batch& in = ws.input(0);
    Batch& out = add_checked_output(ws, in);
    const int n = in.size();
    if (n == 0) return;
    STOKER_ENFORCE(n <= 65535, ValueError, kOp, " (gpu): batches of at most 65535 samples");
    std::vector<kernels::StftGpuSample> desc(static_cast<size_t>(n));
    int64_t rows = 0, most_windows = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.signal = in.data_as<const float>(i);
      d.length = in.shape(i).volume();
      d.windows = kernels::stft_windows(stft_, d.length);
      d.first_row = rows;
      d.out = out.data_as<float>(i);
      rows += d.windows;
      most_windows = std::max(most_windows, d.windows);
    }
    const int64_t bins = nfft_ / 2 + 1;
    const DeviceGuard guard(ws.device_id);
    if (!fft_ || fft_device_ != ws.device_id) {
      fft_ = std::make_unique<kernels::CufftR2c>(nfft_);
      fft_device_ = ws.device_id;
    }
    if (!device_window_ || window_pool_ != ws.device_pool) {
      device_window_ = upload(ws, window_);
      window_pool_ = ws.device_pool;
    }
    const size_t work_bytes = fft_->work_bytes(rows);
    auto frames = ws.device_pool->acquire_on(size_t(rows * nfft_) * sizeof(float), ws.stream);
    auto spectra = ws.device_pool->acquire_on(size_t(rows * bins) * 2 * sizeof(float), ws.stream);
    auto work = ws.device_pool->acquire_on(std::max<size_t>(work_bytes, 1), ws.stream);
    auto device = upload(ws, desc);
    const auto* samples = static_cast<const kernels::StftGpuSample*>(device->data());
    kernels::StftGpuParams p;
    p.window_length = stft_.window_length, p.window_step = stft_.window_step, p.nfft = nfft_;
    p.padding = int32_t(stft_.padding), p.power = stft_.power, p.time_major = stft_.time_major;
    cuda_check(kernels::stft_frames_gpu(samples, n, most_windows, p,
                                        static_cast<const float*>(device_window_->data()),
                                        static_cast<float*>(frames->data()), ws.stream),
               "spectrogram (gpu): cutting the windows");
    fft_->forward(static_cast<const float*>(frames->data()), static_cast<float*>(spectra->data()),
                  rows, work->data(), ws.stream);
    cuda_check(kernels::stft_spectrum_gpu(samples, n, most_windows, p,
                                          static_cast<const float*>(spectra->data()), ws.stream),
               "spectrogram (gpu): the spectra");
  }

 private:
  std::unique_ptr<kernels::CufftR2c> fft_;
  int fft_device_ = -1;
  std::shared_ptr<Buffer> device_window_;
  const void* window_pool_ = nullptr;
};
#endif

}  // namespace

OpSchema spectrogram_schema() {
  return {
      .name = "spectrogram",
      .doc =
          "The spectrogram of a 1-D float32 signal (as DALI): windows of window_length samples "
          "every window_step, times window_fn (default: DALI's Hann window, 0.5 (1 - cos(2 pi "
          "(t + 0.5) / window_length))), each one's nfft-point spectrum (zero-padded), "
          "nfft / 2 + 1 bins of |X|^2 (power 2) or |X| (power 1). Centred windows "
          "(center_windows) reach window_length / 2 before their multiple of the step, the "
          "signal mirrored (reflect_padding) or zero outside: length / window_step + 1 "
          "windows; otherwise (length - window_length) / window_step + 1, rounded towards "
          "zero. Output (bins, windows) with layout 'ft', or (windows, bins) with 'tf'. "
          "Samples of shape (n,), (n, 1) or (1, n). The gpu backend computes the FFTs with "
          "cuFFT (CUDA 13's libcufft.so.12, opened when first run: the system's or PyPI's "
          "nvidia-cufft; without it the backend fails saying so) and the rest as the cpu "
          "backend: its outputs agree with the cpu backend's within 5e-6 of each sample's "
          "largest value (float rounding of two FFTs).",
      .inputs = {"signal"},
      .outputs = {"spectrogram"},
      .args = {optional_arg("nfft", ArgType::kInt,
                            "The FFT's size, at least window_length (unset: window_length).",
                            /*per_sample=*/false),
               {"window_length", ArgType::kInt, "Samples per window.", int64_t{512}},
               {"window_step", ArgType::kInt, "Samples between window starts.", int64_t{256}},
               {"window_fn", ArgType::kFloatList,
                "The window function's window_length values (empty: a Hann window).",
                std::vector<double>{}},
               {"power", ArgType::kInt, "2: the power |X|^2; 1: the magnitude |X|.", int64_t{2}},
               {"center_windows", ArgType::kBool,
                "Centre the windows on multiples of window_step (padding the signal).", true},
               {"reflect_padding", ArgType::kBool,
                "Pad by mirroring the signal (False: zeros); with center_windows only.", true},
               {"layout", ArgType::kString, "'ft' (frequency-major) or 'tf' (time-major).",
                std::string("ft")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Spectrogram>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<SpectrogramGpu>(s); },
#endif
      .example = OpExample{.args = {{"nfft", int64_t{16}},
                                    {"window_length", int64_t{16}},
                                    {"window_step", int64_t{8}}},
                           .dtype = "float32",
                           .layout = ""},
  };
}

}  // namespace stoker::ops
