#include "stoker/ops/signal/power_spectrum.hpp"

#include <complex>
#include <vector>

#include "stoker/kernels/signal/power_spectrum.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "power_spectrum";

class PowerSpectrum : public Operator {
 public:
  explicit PowerSpectrum(const OpSpec& spec)
      : Operator(spec),
        nfft_(spec.arg<int64_t>("nfft")),
        axis_(spec.arg<int64_t>("axis")),
        power_(int(spec.arg<int64_t>("power"))) {
    STOKER_ENFORCE(power_ == 1 || power_ == 2, ValueError, kOp,
                   ": power must be 1 (magnitude) or 2 (power), got ", power_);
    STOKER_ENFORCE(nfft_ <= kernels::kMaxFftSize, ValueError, kOp, ": nfft must be at most ",
                   kernels::kMaxFftSize, ", got ", nfft_);
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError, kOp, ": the input must be float32, got ",
                   dtype_name(in.dtype()));
    const int n = in.size();
    std::vector<TensorShape> shapes;
    std::vector<int> axes;
    std::vector<int64_t> sizes;
    for (int i = 0; i < n; ++i) {
      TensorShape s = in.shape(i);
      STOKER_ENFORCE(s.ndim() >= 1, ValueError, kOp, ": sample ", i,
                     " is a scalar; the transform needs an axis");
      // As DALI: a negative axis is the last one.
      const int axis = axis_ < 0 ? s.ndim() - 1 : int(axis_);
      STOKER_ENFORCE(axis < s.ndim(), ValueError, kOp, ": axis ", axis_,
                     " is out of range for sample ", i, " of shape ", s.to_string());
      const int64_t nfft = nfft_ > 0 ? nfft_ : s[axis];
      STOKER_ENFORCE(nfft > 0, ValueError, kOp, ": sample ", i, " has no values along axis ", axis,
                     " and no nfft is given");
      STOKER_ENFORCE(nfft <= kernels::kMaxFftSize, ValueError, kOp, ": sample ", i, " has ", nfft,
                     " values along axis ", axis, "; an FFT takes at most ", kernels::kMaxFftSize,
                     " (give a smaller nfft)");
      s[axis] = nfft / 2 + 1;
      check_arg_elements(kOp, "nfft", s.dims(), i, double(in.shape(i).volume()));
      shapes.push_back(std::move(s));
      axes.push_back(axis);
      sizes.push_back(nfft);
    }
    Batch& out = add_output(ws, DType::kF32, std::move(shapes), in.layout());
    for_each_sample(ws, n, [&](int i, int) {
      const TensorShape& s = in.shape(i);
      const int axis = axes[size_t(i)];
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= s[d];
      for (int d = axis + 1; d < s.ndim(); ++d) inner *= s[d];
      if (outer * inner == 0) return;
      kernels::RealFft fft(sizes[size_t(i)]);
      std::vector<std::complex<float>> spectrum(size_t(fft.bins()));
      kernels::power_spectrum_cpu(in.data_as<const float>(i), outer, s[axis], inner, power_, fft,
                                  spectrum.data(), out.data_as<float>(i));
    });
  }

 private:
  int64_t nfft_;
  int64_t axis_;
  int power_;
};

}  // namespace

OpSchema power_spectrum_schema() {
  return {
      .name = "power_spectrum",
      .doc =
          "The power spectrum along one axis of float32 samples (as DALI): every line along "
          "`axis` (negative: the last) cut or zero-padded to nfft values (<= 0: the line's "
          "length), its first nfft / 2 + 1 DFT bins as |X|^2 (power 2) or |X| (power 1). The "
          "other extents and the layout are the input's.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"nfft", ArgType::kInt, "The FFT's size (<= 0: the axis' length).", int64_t{-1}},
               {"axis", ArgType::kInt, "The axis transformed (negative: the last).", int64_t{-1}},
               {"power", ArgType::kInt, "2: the power |X|^2; 1: the magnitude |X|.", int64_t{2}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<PowerSpectrum>(s); },
      .example = OpExample{.args = {{"nfft", int64_t{8}}}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
