// RealFft against the DFT's definition summed in double, for every planning path: even sizes
// (KissFFT's real transform), odd smooth sizes (its complex one) and sizes with a large prime
// factor (Bluestein); inputs shorter and longer than nfft, and strided.
#include "stoker/kernels/signal/fft.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

std::vector<std::complex<double>> naive_dft(const std::vector<float>& x, int64_t nfft) {
  std::vector<std::complex<double>> out(size_t(nfft / 2 + 1));
  const int64_t used = std::min<int64_t>(int64_t(x.size()), nfft);
  for (int64_t k = 0; k <= nfft / 2; ++k) {
    std::complex<double> acc = 0;
    for (int64_t t = 0; t < used; ++t) {
      const double phase = -2 * M_PI * double((k * t) % nfft) / double(nfft);
      acc += double(x[size_t(t)]) * std::complex<double>(std::cos(phase), std::sin(phase));
    }
    out[size_t(k)] = acc;
  }
  return out;
}

std::vector<float> noise(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = d(rng);
  return x;
}

void expect_like_dft(int64_t nfft, int64_t n) {
  const auto x = noise(n, unsigned(nfft * 31 + n));
  RealFft fft(nfft);
  std::vector<std::complex<float>> got(size_t(fft.bins()));
  fft.forward(x.data(), n, 1, got.data());
  const auto want = naive_dft(x, nfft);
  double scale = 0;
  for (const auto& w : want) scale = std::max(scale, std::abs(w));
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_NEAR(got[k].real(), want[k].real(), 2e-6 * scale) << "nfft " << nfft << " bin " << k;
    EXPECT_NEAR(got[k].imag(), want[k].imag(), 2e-6 * scale) << "nfft " << nfft << " bin " << k;
  }
}

TEST(RealFft, EqualsTheDftForEverySizeKind) {
  if (!fft_available()) GTEST_SKIP() << "built without KissFFT";
  for (int64_t nfft : {1, 2, 3, 8, 12, 100, 512, 441, 45, 97, 127, 254, 1009, 2017, 4096}) {
    expect_like_dft(nfft, nfft);          // as long as the transform
    expect_like_dft(nfft, nfft / 2 + 1);  // zero-padded
    expect_like_dft(nfft, nfft + 7);      // cut
  }
}

TEST(RealFft, ReadsStridedInput) {
  if (!fft_available()) GTEST_SKIP() << "built without KissFFT";
  const auto x = noise(3 * 50, 4);
  std::vector<float> column;
  for (int t = 0; t < 50; ++t) column.push_back(x[size_t(3 * t + 1)]);
  for (int64_t nfft : {64, 61}) {
    RealFft fft(nfft);
    std::vector<std::complex<float>> strided(size_t(fft.bins())), dense(size_t(fft.bins()));
    fft.forward(x.data() + 1, 50, 3, strided.data());
    fft.forward(column.data(), 50, 1, dense.data());
    EXPECT_EQ(strided, dense);
  }
}

TEST(RealFft, PowerAndMagnitude) {
  const std::complex<float> bins[2] = {{3.f, 4.f}, {0.f, -2.f}};
  float out[4] = {};
  spectrum_from_bins(bins, 2, 2, out, 2);
  EXPECT_EQ(out[0], 25.f);
  EXPECT_EQ(out[2], 4.f);
  spectrum_from_bins(bins, 2, 1, out, 1);
  EXPECT_EQ(out[0], 5.f);
  EXPECT_EQ(out[1], 2.f);
}

TEST(RealFft, WithoutKissFftSaysSo) {
  if (fft_available()) GTEST_SKIP() << "built with KissFFT";
  EXPECT_THROW(RealFft(8), std::exception);
}

}  // namespace
}  // namespace stoker::kernels
