// mel_filter_bank (as DALI 2.4's CPU kernel): nfilter triangular filters over the FFT bins of
// a spectrogram. The filters' corners are nfilter + 2 points equally spaced on the mel scale
// between freq_low and freq_high, taken back to hertz; filter m rises linearly (in hertz) from
// corner m to corner m + 1 and falls to corner m + 2, and bin k sits at k * sample_rate / nfft,
// nfft = 2 (bins - 1). normalize divides each filter by half its width in hertz (unit area).
//
// The tables are DALI's, built in the same mixed float/double steps (the mel conversions in
// float, the grid in double, the weights stored in float) and applied in the same order (per
// bin for a frequency-major spectrogram, per filter for a time-major one), so that the results
// are DALI's bit for bit on the same inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace stoker::kernels {

// Slaney's scale (librosa's default): linear below 1 kHz, logarithmic above.
struct SlaneyMel {
  static constexpr float kFsp = float(200.0 / 3.0);
  static constexpr float kMinLogHz = 1000.f;
  static constexpr float kMinLogMel = kMinLogHz / kFsp;
  static constexpr float kStepLog = 0.068751777f;  // log(6.4) / 27
  static float hz_to_mel(float hz) {
    return hz >= kMinLogHz ? kMinLogMel + std::log(hz / kMinLogHz) / kStepLog : hz / kFsp;
  }
  static float mel_to_hz(float mel) {
    return mel >= kMinLogMel ? kMinLogHz * std::exp(kStepLog * (mel - kMinLogMel)) : mel * kFsp;
  }
};

// HTK's: 2595 log10(1 + f / 700).
struct HtkMel {
  static float hz_to_mel(float hz) { return 1127.f * std::log(1.f + hz / 700.f); }
  static float mel_to_hz(float mel) { return 700.f * (std::exp(mel / 1127.f) - 1.f); }
};

struct MelFilterBankArgs {
  int64_t nfilter = 128;
  float sample_rate = 44100.f;
  float freq_low = 0.f;
  float freq_high = 0.f;  // > freq_low (the operator resolves 0 to sample_rate / 2)
  bool htk = false;
  bool normalize = true;
};

class MelFilterBank {
 public:
  // The filters for a spectrum of `bins` >= 2 FFT bins.
  MelFilterBank(const MelFilterBankArgs& args, int64_t bins) : args_(args), bins_(bins) {
    if (args.htk) {
      build<HtkMel>();
    } else {
      build<SlaneyMel>();
    }
  }

  // A frequency-major spectrum: in (bins, windows) rows `in_stride` apart, out (nfilter,
  // windows) rows `out_stride` apart.
  void apply_freq_major(const float* in, int64_t in_stride, int64_t windows, float* out,
                        int64_t out_stride) const {
    const int64_t nfilter = args_.nfilter;
    for (int64_t m = 0; m < nfilter; ++m) std::fill_n(out + m * out_stride, windows, 0.f);
    for (int64_t bin = bin_start_; bin <= bin_end_; ++bin) {
      const float* row = in + bin * in_stride;
      const int64_t up = interval_[size_t(bin)], down = up - 1;
      float weight_down = weight_down_[size_t(bin)];
      float weight_up = 1.f - weight_down;
      if (down >= 0) {
        if (args_.normalize) weight_down *= norm_[size_t(down)];
        float* o = out + down * out_stride;
        for (int64_t t = 0; t < windows; ++t) o[t] += weight_down * row[t];
      }
      if (up >= 0 && up < nfilter) {
        if (args_.normalize) weight_up *= norm_[size_t(up)];
        float* o = out + up * out_stride;
        for (int64_t t = 0; t < windows; ++t) o[t] += weight_up * row[t];
      }
    }
  }

  // One spectrum of `bins` contiguous values (a row of a time-major spectrogram) into nfilter.
  void apply_time_major(const float* in, float* out) const {
    for (int64_t m = 0; m < args_.nfilter; ++m) {
      float v = 0.f;
      int64_t bin = ends_[size_t(m)];
      for (; bin < ends_[size_t(m + 1)]; ++bin) v += in[bin] * (1.f - weight_down_[size_t(bin)]);
      for (; bin < ends_[size_t(m + 2)]; ++bin) v += in[bin] * weight_down_[size_t(bin)];
      if (args_.normalize) v *= norm_[size_t(m)];
      out[m] = v;
    }
  }

  // The tables, for the GPU twin (signal_gpu.cu), which applies them in the same order.
  const MelFilterBankArgs& args() const { return args_; }
  int64_t bins() const { return bins_; }
  int64_t bin_start() const { return bin_start_; }
  int64_t bin_end() const { return bin_end_; }
  const std::vector<float>& weight_down() const { return weight_down_; }  // per bin
  const std::vector<float>& norm() const { return norm_; }                // per filter
  const std::vector<int>& interval() const { return interval_; }          // per bin
  const std::vector<int64_t>& ends() const { return ends_; }              // nfilter + 2

 private:
  template <typename Scale>
  void build() {
    const int64_t nfilter = args_.nfilter, nfft = 2 * (bins_ - 1);
    const double mel_low = Scale::hz_to_mel(args_.freq_low);
    const double mel_high = Scale::hz_to_mel(args_.freq_high);
    const double hz_step = double(args_.sample_rate) / double(nfft);
    const double mel_delta = (mel_high - mel_low) / double(nfilter + 1);
    const double inv_hz_step = 1.0 / hz_step;
    bin_start_ = std::max<int64_t>(0, int64_t(std::ceil(args_.freq_low * inv_hz_step)));
    // The bins below freq_high (DALI 2.4's range: one exactly at freq_high is left out).
    bin_end_ = std::min<int64_t>(int64_t(std::ceil(args_.freq_high * inv_hz_step)) - 1, bins_ - 1);

    // The falling weight of every bin (its rising one is 1 - that) and the filters' norms.
    weight_down_.assign(size_t(bins_), 0.f);
    norm_.assign(size_t(nfilter), 1.f);
    double mel0 = mel_low, mel1 = mel_low + mel_delta;
    int64_t bin = bin_start_;
    double f = double(bin) * hz_step;
    for (int64_t interval = 0; interval <= nfilter; ++interval, mel0 = mel1, mel1 += mel_delta) {
      if (interval == nfilter) mel1 = mel_high;
      const double f0 = Scale::mel_to_hz(float(mel0)), f1 = Scale::mel_to_hz(float(mel1));
      if (args_.normalize && interval < nfilter) {
        const double f2 = Scale::mel_to_hz(float(mel1 + mel_delta));
        norm_[size_t(interval)] = float(2.0 / (f2 - f0));
      }
      const double slope = 1.0 / (f1 - f0);
      for (; bin <= bin_end_ && f < f1; ++bin, f = double(bin) * hz_step) {
        weight_down_[size_t(bin)] = float((f1 - f) * slope);
      }
    }

    // The filter each bin rises into (-1: below the first corner).
    interval_.assign(size_t(bins_), -1);
    bin = bin_start_;
    f = double(bin) * hz_step;
    double mel = mel_low + mel_delta;
    for (int64_t interval = 0; interval < nfilter + 1; ++interval, mel += mel_delta) {
      const double freq = Scale::mel_to_hz(float(interval == nfilter ? mel_high : mel));
      for (; bin <= bin_end_ && f < freq; ++bin, f = double(bin) * hz_step) {
        interval_[size_t(bin)] = int(interval);
      }
    }

    // The first bin of every interval, for the time-major sums. DALI leaves these unclamped and
    // reads past the spectrum when freq_high is above the Nyquist frequency; kept within it.
    ends_.assign(size_t(nfilter + 2), 0);
    ends_[0] = bin_start_;
    ends_[size_t(nfilter + 1)] = bin_end_ + 1;
    mel = mel_low + mel_delta;
    for (int64_t interval = 1; interval < nfilter + 1; ++interval, mel += mel_delta) {
      const double freq = Scale::mel_to_hz(float(mel));
      ends_[size_t(interval)] = int64_t(std::ceil(freq / hz_step));
    }
    for (size_t k = 0; k < ends_.size(); ++k) {
      ends_[k] = std::clamp<int64_t>(ends_[k], bin_start_, bin_end_ + 1);
      if (k > 0) ends_[k] = std::max(ends_[k], ends_[k - 1]);
    }
  }

  MelFilterBankArgs args_;
  int64_t bins_;
  int64_t bin_start_ = 0, bin_end_ = -1;
  std::vector<float> weight_down_, norm_;
  std::vector<int> interval_;
  std::vector<int64_t> ends_;
};

}  // namespace stoker::kernels
