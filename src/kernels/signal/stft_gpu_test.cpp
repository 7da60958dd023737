// spectrogram's GPU kernels against stft.hpp's CPU kernel on ragged batches (a one-sample
// signal, signals shorter than a window, long ones): the windows cut and weighted equal
// stft_frame's bit for bit, the bins from given spectra equal spectrum_from_bins' bit for bit,
// and the whole spectrogram through cuFFT equals stft_cpu's (KissFFT) within kTolerance of each
// sample's largest value.
#include "stoker/kernels/signal/stft_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/signal/stft.hpp"

namespace stoker::kernels {
namespace {

// cuFFT against KissFFT, both in float: the largest difference over the largest value of a
// sample's spectrogram (the operator's documented tolerance).
constexpr double kTolerance = 5e-6;

struct Case {
  int64_t nfft, window_length, window_step;
  StftPadding padding;
  int power;
  bool time_major;
  std::vector<float> window;  // empty: Hann
};

std::vector<std::vector<float>> batch_signals() {
  std::mt19937 rng(3);
  std::normal_distribution<float> g;
  std::vector<std::vector<float>> out;
  for (int64_t n : {2000, 1, 5, 333, 64, 4000}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t)
      x[size_t(t)] = std::sin(0.05f * float(t) * (1 + float(t) / float(n))) + 0.1f * g(rng);
    out.push_back(std::move(x));
  }
  return out;
}

class Device {
 public:
  Device() : pool_(make_device_allocator(0)) {}
  template <typename T>
  T* copy(const std::vector<T>& v) {
    T* p = alloc<T>(v.size());
    cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
    return p;
  }
  template <typename T>
  T* alloc(size_t count) {
    auto b = pool_.acquire(count * sizeof(T) + 8);
    keep_.push_back(b);
    return static_cast<T*>(b->data());
  }
  template <typename T>
  std::vector<T> read(const T* p, size_t count) {
    std::vector<T> v(count);
    cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }

 private:
  MemoryPool pool_;
  std::vector<std::shared_ptr<Buffer>> keep_;
};

struct Prepared {
  Stft stft;
  std::vector<float> window;
  std::vector<StftGpuSample> desc;
  StftGpuParams params;
  int64_t rows = 0, most_windows = 0;
  const StftGpuSample* device_desc = nullptr;
};

// The descriptors of `signals` for case c, their outputs allocated.
Prepared prepare(Device& dev, const std::vector<std::vector<float>>& signals, const Case& c) {
  Prepared p;
  p.stft.window_length = c.window_length, p.stft.window_step = c.window_step;
  p.stft.padding = c.padding, p.stft.power = c.power, p.stft.time_major = c.time_major;
  p.window = c.window;
  if (p.window.empty()) {
    p.window.resize(size_t(c.window_length));
    hann_window(p.window.data(), c.window_length);
  }
  const int64_t bins = c.nfft / 2 + 1;
  for (const auto& x : signals) {
    StftGpuSample d;
    d.signal = dev.copy(x);
    d.length = int64_t(x.size());
    d.windows = stft_windows(p.stft, d.length);
    d.first_row = p.rows;
    d.out = dev.alloc<float>(size_t(d.windows * bins));
    p.rows += d.windows;
    p.most_windows = std::max(p.most_windows, d.windows);
    p.desc.push_back(d);
  }
  p.params.window_length = c.window_length, p.params.window_step = c.window_step;
  p.params.nfft = c.nfft, p.params.padding = int32_t(c.padding), p.params.power = c.power;
  p.params.time_major = c.time_major;
  p.device_desc = dev.copy(p.desc);
  return p;
}

const std::vector<Case> kCases = {
    {512, 400, 160, StftPadding::kReflect, 2, false, {}},
    {256, 256, 100, StftPadding::kReflect, 1, false, {}},
    {97, 64, 20, StftPadding::kZero, 2, false, {}},  // a prime size
    {300, 255, 100, StftPadding::kReflect, 2, true, {}},
    {8, 3, 2, StftPadding::kReflect, 2, false, {0.5f, 1.0f, 0.25f}},
};

TEST(StftGpu, WindowsEqualTheCpusFrames) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  Device dev;
  const auto signals = batch_signals();
  for (const Case& c : kCases) {
    Prepared p = prepare(dev, signals, c);
    float* frames = dev.alloc<float>(size_t(p.rows * c.nfft));
    ASSERT_EQ(stft_frames_gpu(p.device_desc, int(p.desc.size()), p.most_windows, p.params,
                              dev.copy(p.window), frames, nullptr),
              0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = dev.read(frames, size_t(p.rows * c.nfft));
    for (size_t i = 0; i < signals.size(); ++i) {
      for (int64_t w = 0; w < p.desc[i].windows; ++w) {
        std::vector<float> want(size_t(c.nfft), 0.f);
        stft_frame(p.stft, signals[i].data(), int64_t(signals[i].size()), p.window.data(), w,
                   want.data());
        const float* row = got.data() + (p.desc[i].first_row + w) * c.nfft;
        EXPECT_EQ(std::memcmp(row, want.data(), want.size() * sizeof(float)), 0)
            << "nfft " << c.nfft << " sample " << i << " window " << w;
      }
    }
  }
}

TEST(StftGpu, BinsEqualTheCpusSpectrumFromBins) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  Device dev;
  std::mt19937 rng(9);
  std::normal_distribution<float> g;
  const auto signals = batch_signals();
  for (const Case& c : kCases) {
    Prepared p = prepare(dev, signals, c);
    const int64_t bins = c.nfft / 2 + 1;
    std::vector<std::complex<float>> spectra(size_t(p.rows * bins));
    for (auto& v : spectra) v = {100 * g(rng), 100 * g(rng)};
    std::vector<float> flat(spectra.size() * 2);
    std::memcpy(flat.data(), spectra.data(), flat.size() * sizeof(float));
    ASSERT_EQ(stft_spectrum_gpu(p.device_desc, int(p.desc.size()), p.most_windows, p.params,
                                dev.copy(flat), nullptr),
              0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (size_t i = 0; i < p.desc.size(); ++i) {
      const int64_t windows = p.desc[i].windows;
      std::vector<float> want(size_t(windows * bins));
      for (int64_t w = 0; w < windows; ++w) {
        const auto* row = spectra.data() + (p.desc[i].first_row + w) * bins;
        if (c.time_major) {
          spectrum_from_bins(row, bins, c.power, want.data() + w * bins, 1);
        } else {
          spectrum_from_bins(row, bins, c.power, want.data() + w, windows);
        }
      }
      const auto got = dev.read(p.desc[i].out, want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << "nfft " << c.nfft << " sample " << i;
    }
  }
}

TEST(StftGpu, SpectrogramThroughCufftEqualsTheCpuWithinTolerance) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  if (!fft_available()) GTEST_SKIP() << "no KissFFT in this build: nothing to compare with";
  const std::string why = cufft_unavailable();
  if (!why.empty()) GTEST_SKIP() << "cuFFT cannot be used: " << why;
  Device dev;
  auto signals = batch_signals();
  // Enough windows that the rows take several power-of-two plans (1000 + ...).
  signals.push_back(std::vector<float>(size_t(64 * 1000 + 17), 0.25f));
  for (const Case& c : kCases) {
    Prepared p = prepare(dev, signals, c);
    const int64_t bins = c.nfft / 2 + 1;
    CufftR2c fft(c.nfft);
    float* frames = dev.alloc<float>(size_t(p.rows * c.nfft));
    float* spectra = dev.alloc<float>(size_t(p.rows * bins * 2));
    void* work = dev.alloc<char>(std::max<size_t>(fft.work_bytes(p.rows), 1));
    const int n = int(p.desc.size());
    ASSERT_EQ(stft_frames_gpu(p.device_desc, n, p.most_windows, p.params, dev.copy(p.window),
                              frames, nullptr),
              0);
    fft.forward(frames, spectra, p.rows, work, nullptr);
    ASSERT_EQ(stft_spectrum_gpu(p.device_desc, n, p.most_windows, p.params, spectra, nullptr), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    RealFft cpu_fft(c.nfft);
    double worst_ratio = 0;
    for (size_t i = 0; i < signals.size(); ++i) {
      const int64_t windows = p.desc[i].windows;
      std::vector<float> want(size_t(windows * bins)), frame(size_t(c.window_length));
      std::vector<std::complex<float>> spectrum(static_cast<size_t>(bins));
      stft_cpu(p.stft, signals[i].data(), int64_t(signals[i].size()), p.window.data(), cpu_fft,
               frame.data(), spectrum.data(), want.data());
      const auto got = dev.read(p.desc[i].out, want.size());
      double largest = 0, worst = 0;
      for (size_t k = 0; k < want.size(); ++k) {
        largest = std::max(largest, double(std::abs(want[k])));
        worst = std::max(worst, std::abs(double(got[k]) - double(want[k])));
      }
      EXPECT_LE(worst, kTolerance * std::max(largest, 1e-30))
          << "nfft " << c.nfft << " sample " << i << ": " << worst / largest
          << " of the largest value";
      worst_ratio = std::max(worst_ratio, worst / std::max(largest, 1e-30));
    }
    // The measured margin, in the XML report (--gtest_output=xml).
    std::ostringstream ratio;
    ratio << worst_ratio;
    RecordProperty("worst_ratio_nfft_" + std::to_string(c.nfft), ratio.str());
  }
}

}  // namespace
}  // namespace stoker::kernels
