// The mel filter bank against the textbook triangles, computed in double from the scales'
// formulas (Slaney's: linear below 1 kHz at 200/3 Hz a mel, then log(6.4)/27 a mel; HTK's:
// 2595 log10(1 + f/700)): applied to an identity spectrum, the bank is its weight matrix.
#include "stoker/kernels/signal/mel_filter_bank.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

double slaney_hz_to_mel(double f) {
  return f < 1000 ? f / (200.0 / 3) : 15 + std::log(f / 1000) / (std::log(6.4) / 27);
}
double slaney_mel_to_hz(double m) {
  return m < 15 ? m * 200.0 / 3 : 1000 * std::exp((m - 15) * std::log(6.4) / 27);
}
double htk_hz_to_mel(double f) { return 2595 * std::log10(1 + f / 700); }
double htk_mel_to_hz(double m) { return 700 * (std::pow(10, m / 2595) - 1); }

// weights[m][k] of the definition.
std::vector<std::vector<double>> reference(const MelFilterBankArgs& a, int64_t bins) {
  auto to_mel = a.htk ? htk_hz_to_mel : slaney_hz_to_mel;
  auto to_hz = a.htk ? htk_mel_to_hz : slaney_mel_to_hz;
  const double lo = to_mel(a.freq_low), hi = to_mel(a.freq_high);
  std::vector<double> corner;
  for (int64_t k = 0; k < a.nfilter + 2; ++k) {
    corner.push_back(to_hz(lo + (hi - lo) * double(k) / double(a.nfilter + 1)));
  }
  std::vector<std::vector<double>> w(size_t(a.nfilter), std::vector<double>(size_t(bins)));
  for (int64_t m = 0; m < a.nfilter; ++m) {
    const double f0 = corner[size_t(m)], f1 = corner[size_t(m + 1)], f2 = corner[size_t(m + 2)];
    for (int64_t k = 0; k < bins; ++k) {
      const double f = double(k) * a.sample_rate / double(2 * (bins - 1));
      if (f < a.freq_low || f > a.freq_high) continue;
      double v = 0;
      if (f >= f0 && f < f1) v = (f - f0) / (f1 - f0);
      if (f >= f1 && f < f2) v = (f2 - f) / (f2 - f1);
      w[size_t(m)][size_t(k)] = a.normalize ? v * 2 / (f2 - f0) : v;
    }
  }
  return w;
}

void expect_like_reference(const MelFilterBankArgs& a, int64_t bins) {
  MelFilterBank bank(a, bins);
  std::vector<float> identity(size_t(bins * bins)), ft(size_t(a.nfilter * bins));
  for (int64_t k = 0; k < bins; ++k) identity[size_t(k * bins + k)] = 1.f;
  bank.apply_freq_major(identity.data(), bins, bins, ft.data(), bins);
  const auto want = reference(a, bins);
  double scale = 0;
  for (const auto& row : want)
    for (double v : row) scale = std::max(scale, v);
  std::vector<float> tf(static_cast<size_t>(a.nfilter));
  for (int64_t k = 0; k < bins; ++k) {
    bank.apply_time_major(identity.data() + k * bins, tf.data());
    for (int64_t m = 0; m < a.nfilter; ++m) {
      const double w = want[size_t(m)][size_t(k)];
      EXPECT_NEAR(ft[size_t(m * bins + k)], w, 1e-5 * scale) << "filter " << m << " bin " << k;
      EXPECT_NEAR(tf[size_t(m)], w, 1e-5 * scale) << "filter " << m << " bin " << k;
    }
  }
}

TEST(MelFilterBank, EqualsTheTriangles) {
  for (bool htk : {false, true}) {
    for (bool normalize : {true, false}) {
      expect_like_reference({10, 16000.f, 0.f, 8000.f, htk, normalize}, 129);
      expect_like_reference({40, 22050.f, 300.f, 5000.f, htk, normalize}, 257);
      expect_like_reference({4, 8000.f, 100.f, 4000.f, htk, normalize}, 33);
    }
  }
}

TEST(MelFilterBank, BothLayoutsGiveTheSameSums) {
  const MelFilterBankArgs a{20, 16000.f, 0.f, 8000.f, false, true};
  const int64_t bins = 65, windows = 7;
  MelFilterBank bank(a, bins);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(0.f, 1.f);
  std::vector<float> ft(size_t(bins * windows)), tf(size_t(bins * windows));
  for (int64_t k = 0; k < bins; ++k)
    for (int64_t t = 0; t < windows; ++t)
      ft[size_t(k * windows + t)] = tf[size_t(t * bins + k)] = d(rng);
  std::vector<float> out_ft(size_t(a.nfilter * windows)), out_tf(static_cast<size_t>(a.nfilter));
  bank.apply_freq_major(ft.data(), windows, windows, out_ft.data(), windows);
  for (int64_t t = 0; t < windows; ++t) {
    bank.apply_time_major(tf.data() + t * bins, out_tf.data());
    for (int64_t m = 0; m < a.nfilter; ++m) {
      EXPECT_NEAR(out_tf[size_t(m)], out_ft[size_t(m * windows + t)], 1e-6);
    }
  }
}

TEST(MelFilterBank, StaysWithinTheSpectrumAboveNyquist) {
  // freq_high above sample_rate / 2: the filters above the last bin see nothing.
  const MelFilterBankArgs a{16, 16000.f, 0.f, 12000.f, true, false};
  MelFilterBank bank(a, 17);
  std::vector<float> spectrum(17, 1.f), out(16);
  bank.apply_time_major(spectrum.data(), out.data());
  EXPECT_EQ(out.back(), 0.f);
  expect_like_reference(a, 17);
}

}  // namespace
}  // namespace stoker::kernels
