#include "stoker/ops/signal/mel_filter_bank.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "stoker/kernels/signal/mel_filter_bank.hpp"
#include "stoker/kernels/signal/signal_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "mel_filter_bank";

class MelFilterBankOp : public Operator {
 public:
  explicit MelFilterBankOp(const OpSpec& spec) : Operator(spec) {
    args_.nfilter = spec.arg<int64_t>("nfilter");
    args_.sample_rate = float(spec.arg<double>("sample_rate"));
    args_.freq_low = float(spec.arg<double>("freq_low"));
    args_.freq_high = float(spec.arg<double>("freq_high"));
    args_.normalize = spec.arg<bool>("normalize");
    STOKER_ENFORCE(args_.nfilter > 0, ValueError, kOp, ": nfilter must be positive, got ",
                   args_.nfilter);
    STOKER_ENFORCE(args_.sample_rate > 0, ValueError, kOp, ": sample_rate must be positive, got ",
                   args_.sample_rate);
    STOKER_ENFORCE(args_.freq_low >= 0, ValueError, kOp, ": freq_low must not be negative, got ",
                   args_.freq_low);
    if (args_.freq_high <= 0) args_.freq_high = 0.5f * args_.sample_rate;
    // DALI's check: up to sample_rate (filters above the Nyquist frequency see no bins).
    STOKER_ENFORCE(args_.freq_high > args_.freq_low && args_.freq_high <= args_.sample_rate,
                   ValueError, kOp, ": freq_high must be in (freq_low, sample_rate], got ",
                   args_.freq_high, " (freq_low ", args_.freq_low, ", sample_rate ",
                   args_.sample_rate, ")");
    const auto formula = spec.arg<std::string>("mel_formula");
    STOKER_ENFORCE(formula == "slaney" || formula == "htk", ValueError, kOp,
                   ": mel_formula must be 'slaney' or 'htk', got '", formula, "'");
    args_.htk = formula == "htk";
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Plan plan = make_plan(in);
    const int axis = plan.axis;
    Batch& out = add_output(ws, DType::kF32, std::move(plan.shapes), in.layout());
    for_each_sample(ws, n, [&](int i, int) {
      const TensorShape& s = in.shape(i);
      const int64_t bins = s[axis], nfilter = args_.nfilter;
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= s[d];
      for (int d = axis + 1; d < s.ndim(); ++d) inner *= s[d];
      const float* src = in.data_as<const float>(i);
      float* dst = out.data_as<float>(i);
      if (bins < 2) {  // no frequencies to filter (DALI's result: zeros)
        std::fill_n(dst, outer * nfilter * inner, 0.f);
        return;
      }
      const auto& bank = plan.banks.at(bins);
      for (int64_t o = 0; o < outer; ++o) {
        if (inner == 1) {
          bank.apply_time_major(src + o * bins, dst + o * nfilter);
        } else {
          bank.apply_freq_major(src + o * bins * inner, inner, inner, dst + o * nfilter * inner,
                                inner);
        }
      }
    });
  }

 protected:
  // The checks, the output shapes, and one bank per spectrum size in the batch (usually one),
  // shared by the samples.
  struct Plan {
    int axis = -1;
    std::vector<TensorShape> shapes;
    std::map<int64_t, kernels::MelFilterBank> banks;
  };

  Plan make_plan(const Batch& in) const {
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError, kOp,
                   ": the spectrogram must be float32, got ", dtype_name(in.dtype()));
    const int n = in.size();
    // The frequency axis: the layout's 'f'; without a layout "f", "ft" or "...ft".
    int axis = -1;
    if (n > 0) {
      const int ndim = in.shape(0).ndim();
      STOKER_ENFORCE(ndim >= 1, ValueError, kOp,
                     ": the spectrogram has no frequency axis (a "
                     "scalar sample)");
      axis = in.layout().empty() ? std::max(0, ndim - 2) : in.layout().find('f');
      STOKER_ENFORCE(axis >= 0, ValueError, kOp, ": the layout '", in.layout().str(),
                     "' has no 'f' (frequency) axis");
    }
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      TensorShape s = in.shape(i);
      STOKER_ENFORCE(axis < s.ndim(), ValueError, kOp, ": sample ", i, " of shape ", s.to_string(),
                     " has no axis ", axis);
      s[axis] = args_.nfilter;
      check_arg_elements(kOp, "nfilter", s.dims(), i, double(in.shape(i).volume()));
      shapes.push_back(std::move(s));
    }
    Plan plan{axis, std::move(shapes), {}};
    for (int i = 0; i < n; ++i) {
      const int64_t bins = in.shape(i)[axis];
      if (bins >= 2 && !plan.banks.count(bins)) {
        plan.banks.emplace(bins, kernels::MelFilterBank(args_, bins));
      }
    }
    return plan;
  }

  kernels::MelFilterBankArgs args_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the banks' tables (built on the host as for the cpu backend) in one upload,
// one launch for the batch.
class MelFilterBankGpu final : public MelFilterBankOp {
 public:
  using MelFilterBankOp::MelFilterBankOp;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Plan plan = make_plan(in);
    const int axis = plan.axis;
    Batch& out = add_output(ws, DType::kF32, std::move(plan.shapes), in.layout());
    kernels::MelBankPack pack;
    std::map<int64_t, int> bank_of;  // bins -> the bank's number in the pack
    for (const auto& [bins, bank] : plan.banks) bank_of[bins] = pack.add(bank);
    std::vector<kernels::MelGpuSample> desc;
    std::vector<int> bank_index;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      kernels::MelGpuSample d{in.data_as<const float>(i), out.data_as<float>(i), 1, s[axis], 1};
      for (int a = 0; a < axis; ++a) d.outer *= s[a];
      for (int a = axis + 1; a < s.ndim(); ++a) d.inner *= s[a];
      const int64_t outputs = d.outer * args_.nfilter * d.inner;
      if (outputs == 0) continue;
      desc.push_back(d);
      bank_index.push_back(d.bins >= 2 ? bank_of.at(d.bins) : -1);
      most = std::max(most, outputs);
    }
    if (desc.empty()) return;
    std::shared_ptr<Buffer> tables;
    if (!pack.bytes().empty()) {
      tables = upload(ws, pack.bytes());
      for (size_t k = 0; k < desc.size(); ++k) {
        if (bank_index[k] >= 0) desc[k].bank = pack.on_device(bank_index[k], tables->data());
      }
    }
    auto device = upload(ws, desc);
    cuda_check(
        kernels::mel_filter_bank_gpu(static_cast<const kernels::MelGpuSample*>(device->data()),
                                     int(desc.size()), most, args_.nfilter, ws.stream),
        "mel_filter_bank (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema mel_filter_bank_schema() {
  return {
      .name = "mel_filter_bank",
      .doc =
          "Converts a spectrogram to a mel spectrogram (as DALI): nfilter triangular filters "
          "over the frequency axis ('f' of the layout; without a layout the second-to-last, "
          "or the only one), their corners nfilter + 2 points equally spaced on the mel scale "
          "('slaney': librosa's default, linear below 1 kHz; 'htk': 2595 log10(1 + f / 700)) "
          "from freq_low to freq_high (0: sample_rate / 2), bin k at k * sample_rate / nfft "
          "with nfft = 2 (bins - 1). normalize scales each filter to unit area (else unit "
          "peak). float32; the other extents and the layout are the input's. The gpu backend "
          "gives the cpu backend's values bit for bit.",
      .inputs = {"spectrogram"},
      .outputs = {"mel_spectrogram"},
      .args = {{"nfilter", ArgType::kInt, "The number of filters.", int64_t{128}},
               {"sample_rate", ArgType::kFloat, "The signal's sampling rate (Hz).", 44100.0},
               {"freq_low", ArgType::kFloat, "The lowest frequency (Hz).", 0.0},
               {"freq_high", ArgType::kFloat, "The highest frequency (Hz; 0: sample_rate / 2).",
                0.0},
               {"normalize", ArgType::kBool, "Unit-area filters (False: unit peak).", true},
               {"mel_formula", ArgType::kString, "'slaney' or 'htk'.", std::string("slaney")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<MelFilterBankOp>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<MelFilterBankGpu>(s); },
#endif
      .example = OpExample{.args = {{"nfilter", int64_t{4}}}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
