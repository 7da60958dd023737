// The STFT and power_spectrum kernels against the definitions: windows cut by hand from the
// (mirrored or zero-padded) signal, multiplied by the window, transformed by a DFT summed in
// double.
#include "stoker/kernels/signal/stft.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "stoker/kernels/signal/power_spectrum.hpp"

namespace stoker::kernels {
namespace {

std::vector<float> noise(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = d(rng);
  return x;
}

// |DFT|^power of x zero-padded (or cut) to nfft, bin k.
double spectrum(const std::vector<double>& x, int64_t nfft, int64_t k, int power) {
  std::complex<double> acc = 0;
  for (int64_t t = 0; t < std::min<int64_t>(int64_t(x.size()), nfft); ++t) {
    acc += x[size_t(t)] * std::polar(1.0, -2 * M_PI * double((k * t) % nfft) / double(nfft));
  }
  return power == 2 ? std::norm(acc) : std::abs(acc);
}

TEST(Stft, HannWindowIsDalis) {
  float w[4];
  hann_window(w, 4);
  // 0.5 (1 - cos(2 pi (t + 0.5) / 4)): symmetric, never 0.
  EXPECT_NEAR(w[0], 0.5 * (1 - std::cos(M_PI / 4)), 1e-7);
  EXPECT_NEAR(w[1], 0.5 * (1 - std::cos(3 * M_PI / 4)), 1e-7);
  EXPECT_EQ(w[0], w[3]);
  EXPECT_EQ(w[1], w[2]);
}

TEST(Stft, ReflectsAboutTheEndSamples) {
  const int64_t want[] = {2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1};
  for (int64_t i = -2; i < 10; ++i) EXPECT_EQ(reflect_101(i, 5), want[i + 2]) << i;
  EXPECT_EQ(reflect_101(-7, 1), 0);
  EXPECT_EQ(reflect_101(9, 1), 0);
}

TEST(Stft, CountsWindowsAsDali) {
  Stft s;
  s.window_length = 64;
  s.window_step = 32;
  EXPECT_EQ(stft_windows(s, 1000), 1000 / 32 + 1);
  EXPECT_EQ(stft_windows(s, 1), 1);
  s.padding = StftPadding::kNone;
  EXPECT_EQ(stft_windows(s, 1000), (1000 - 64) / 32 + 1);
  EXPECT_EQ(stft_windows(s, 64), 1);
  EXPECT_EQ(stft_windows(s, 40), 1);  // (40 - 64) / 32 is 0 in C++
  EXPECT_EQ(stft_windows(s, 20), 0);
}

void expect_like_definition(const Stft& s, int64_t n, int64_t nfft) {
  const auto x = noise(n, unsigned(n + nfft));
  std::vector<float> window(static_cast<size_t>(s.window_length));
  hann_window(window.data(), s.window_length);
  RealFft fft(nfft);
  const int64_t windows = stft_windows(s, n), bins = fft.bins();
  std::vector<float> out(size_t(windows * bins)), frame(static_cast<size_t>(s.window_length));
  std::vector<std::complex<float>> scratch(static_cast<size_t>(bins));
  stft_cpu(s, x.data(), n, window.data(), fft, frame.data(), scratch.data(), out.data());
  const int64_t centre = s.padding == StftPadding::kNone ? 0 : s.window_length / 2;
  for (int64_t w = 0; w < windows; ++w) {
    std::vector<double> cut(static_cast<size_t>(s.window_length));
    for (int64_t t = 0; t < s.window_length; ++t) {
      int64_t i = w * s.window_step - centre + t;
      if (s.padding == StftPadding::kReflect) {
        while (n > 1 && (i < 0 || i >= n)) i = i < 0 ? -i : 2 * n - 2 - i;
        if (n == 1) i = 0;
      }
      cut[size_t(t)] = i >= 0 && i < n ? double(window[size_t(t)]) * x[size_t(i)] : 0.0;
    }
    double scale = 1e-30;
    for (int64_t k = 0; k < bins; ++k) scale = std::max(scale, spectrum(cut, nfft, k, s.power));
    for (int64_t k = 0; k < bins; ++k) {
      const float got = s.time_major ? out[size_t(w * bins + k)] : out[size_t(k * windows + w)];
      EXPECT_NEAR(got, spectrum(cut, nfft, k, s.power), 3e-6 * scale)
          << "window " << w << " bin " << k << " n " << n;
    }
  }
}

TEST(Stft, EqualsTheDefinition) {
  if (!fft_available()) GTEST_SKIP() << "built without KissFFT";
  Stft s;
  s.window_length = 40;
  s.window_step = 13;
  for (auto padding : {StftPadding::kReflect, StftPadding::kZero, StftPadding::kNone}) {
    s.padding = padding;
    for (int64_t n : {300, 41, 39}) {
      for (int64_t nfft : {40, 64, 45}) {
        for (int power : {1, 2}) {
          s.power = power;
          s.time_major = power == 1;
          expect_like_definition(s, n, nfft);
        }
      }
    }
  }
  s.padding = StftPadding::kReflect;
  expect_like_definition(s, 5, 40);  // mirrored many times over
  expect_like_definition(s, 1, 40);
}

TEST(PowerSpectrum, TransformsTheMiddleAxis) {
  if (!fft_available()) GTEST_SKIP() << "built without KissFFT";
  const int64_t outer = 2, n = 30, inner = 3;
  const auto x = noise(outer * n * inner, 7);
  for (int64_t nfft : {30, 16, 50, 31}) {
    RealFft fft(nfft);
    const int64_t bins = fft.bins();
    std::vector<float> out(size_t(outer * bins * inner));
    std::vector<std::complex<float>> scratch(static_cast<size_t>(bins));
    power_spectrum_cpu(x.data(), outer, n, inner, 2, fft, scratch.data(), out.data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        std::vector<double> line;
        for (int64_t t = 0; t < n; ++t) line.push_back(x[size_t((o * n + t) * inner + j)]);
        for (int64_t k = 0; k < bins; ++k) {
          const double want = spectrum(line, nfft, k, 2);
          EXPECT_NEAR(out[size_t((o * bins + k) * inner + j)], want, 1e-4 * (1 + want));
        }
      }
    }
  }
}

}  // namespace
}  // namespace stoker::kernels
