#include "stoker/kernels/signal/resample.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// The definition in double: the Hann-windowed sinc h(t) = sinc(t) * (1 + cos(pi t / L)) / 2
// for |t| < L, sampled at `coeffs` points over [-L, L] (a table DALI reads with linear
// interpolation), and an output frame at input position x = o * in_rate / out_rate is
// sum_i in[i] * h~(i - x) over the inputs in [0, n). The positions x are DALI's: o * in_rate /
// out_rate in double at every 256th output, float steps of in_rate / out_rate between (they
// drift by up to ~1e-4 within a block, which is part of what DALI computes).
double table_value(int lobes, int coeffs, int k) {
  const int center = (coeffs - 1) / 2;
  const double t = double(k - center) * 2.0 * lobes / (coeffs - 1);
  const double sinc = t == 0 ? 1.0 : std::sin(M_PI * t) / (M_PI * t);
  const double y = double(k - center) * 2.0 / coeffs;
  return sinc * 0.5 * (1 + std::cos(M_PI * y));
}

double window_reference(int lobes, int coeffs, double t) {
  const double fi = t * (coeffs - 1) / (2.0 * lobes) + (coeffs - 1) / 2;
  const int k = int(std::floor(fi));
  auto at = [&](int j) { return j < 0 || j >= coeffs ? 0.0 : table_value(lobes, coeffs, j); };
  return at(k) + (fi - k) * (at(k + 1) - at(k));
}

std::vector<double> resample_reference(const std::vector<float>& in, int channels, double in_rate,
                                       double out_rate, int lobes) {
  const int coeffs = resample_lookup_size(lobes);
  const int64_t n = int64_t(in.size()) / channels;
  const int64_t out_n = resampled_length(n, in_rate, out_rate);
  std::vector<double> out(size_t(out_n * channels), 0.0);
  const float step = float(in_rate / out_rate);
  float frac = 0;
  int64_t base = 0;
  for (int64_t o = 0; o < out_n; ++o) {
    if (o % 256 == 0) {
      const double start = double(o) * (in_rate / out_rate);
      base = int64_t(std::floor(start));
      frac = float(start - double(base));
    } else {
      frac += step;
    }
    const double x = double(base) + double(frac);
    for (int64_t i = int64_t(std::ceil(x)) - lobes; i < int64_t(std::ceil(x)) + lobes; ++i) {
      if (i < 0 || i >= n) continue;
      const double w = window_reference(lobes, coeffs, double(i) - x);
      for (int c = 0; c < channels; ++c)
        out[size_t(o * channels + c)] += double(in[size_t(i * channels + c)]) * w;
    }
  }
  return out;
}

TEST(Resample, LobesAndTableSizeFollowTheQuality) {
  EXPECT_EQ(resample_lobes(0), 3);
  EXPECT_EQ(resample_lobes(50), 16);
  EXPECT_EQ(resample_lobes(100), 64);
  EXPECT_EQ(resample_lookup_size(16), 1025);
}

TEST(Resample, LengthIsTheCeilingOfTheScaledLength) {
  EXPECT_EQ(resampled_length(500, 22050, 16000), 363);  // 362.8...
  EXPECT_EQ(resampled_length(500, 16000, 8000), 250);
  EXPECT_EQ(resampled_length(0, 1, 2), 0);
  EXPECT_EQ(resampled_length(7, 1, 0), 0);
}

TEST(Resample, TheTableIsTheWindowedSinc) {
  for (int lobes : {3, 16, 64}) {
    const int coeffs = resample_lookup_size(lobes);
    const ResampleWindow w = make_resample_window(lobes, coeffs);
    ASSERT_EQ(w.lookup.size(), size_t(coeffs) + 5);
    EXPECT_EQ(w.lookup[0], 0.0f);
    for (int k = 0; k < coeffs; ++k)
      ASSERT_NEAR(w.lookup[size_t(k) + 1], table_value(lobes, coeffs, k), 2e-7)
          << lobes << " " << k;
    for (size_t k = size_t(coeffs) + 1; k < w.lookup.size(); ++k) EXPECT_EQ(w.lookup[k], 0.0f);
    EXPECT_FLOAT_EQ(w(0.0f), 1.0f);  // the centre
    // The table index t * 32 + 32 * lobes + 1 is a float: near 2049 (64 lobes) it is a multiple
    // of 2^-12 of a table step, so the interpolation is that coarse.
    for (double t : {-2.7, -1.0, 0.3, 1.55, 2.999})
      EXPECT_NEAR(w(float(t)), window_reference(lobes, coeffs, t), 1e-5) << lobes << " " << t;
  }
}

TEST(Resample, MatchesTheDefinitionForEveryChannelCountAndRatio) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int lobes : {3, 16})
    for (int channels : {1, 2, 3, 17})
      for (auto [in_rate, out_rate] :
           {std::pair{16000.0, 22050.0}, {44100.0, 16000.0}, {1.0, 1.0}, {3.0, 7.0}}) {
        const int64_t n = 700;  // several 256-output blocks
        std::vector<float> in(size_t(n * channels));
        for (auto& v : in) v = u(rng);
        const auto expected = resample_reference(in, channels, in_rate, out_rate, lobes);
        std::vector<float> out(expected.size(), -9.f);
        const auto w = make_resample_window(lobes, resample_lookup_size(lobes));
        resample_cpu(out.data(), int64_t(out.size()) / channels, out_rate, in.data(), n, in_rate,
                     channels, w);
        for (size_t k = 0; k < out.size(); ++k)
          ASSERT_NEAR(out[k], expected[k], 2e-5)
              << "lobes " << lobes << " channels " << channels << " " << in_rate << "->" << out_rate
              << " at " << k;
      }
}

// Channels are independent: channel c of a multi-channel resample equals the mono path's result
// on channel c alone, within the rounding of the four-lane sum.
TEST(Resample, ChannelsAreResampledIndependently) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t n = 300;
  std::vector<float> stereo(size_t(2 * n)), left(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    stereo[size_t(2 * i)] = left[size_t(i)] = u(rng);
    stereo[size_t(2 * i + 1)] = 0.0f;
  }
  const auto w = make_resample_window(16, resample_lookup_size(16));
  const int64_t m = resampled_length(n, 8, 11);
  std::vector<float> out2(size_t(2 * m)), out1(static_cast<size_t>(m));
  resample_cpu(out2.data(), m, 11, stereo.data(), n, 8, 2, w);
  resample_cpu(out1.data(), m, 11, left.data(), n, 8, 1, w);
  for (int64_t o = 0; o < m; ++o) {
    ASSERT_NEAR(out2[size_t(2 * o)], out1[size_t(o)], 1e-6) << o;
    ASSERT_EQ(out2[size_t(2 * o + 1)], 0.0f) << o;
  }
}

TEST(Resample, IntegerOutputsAreScaledRoundedAndSaturated) {
  EXPECT_EQ(from_norm_float<int16_t>(0.5f), 16384);  // 16383.5 rounds away from zero
  EXPECT_EQ(from_norm_float<int16_t>(-0.5f), -16384);
  EXPECT_EQ(from_norm_float<int16_t>(2.0f), 32767);
  EXPECT_EQ(from_norm_float<int16_t>(-2.0f), -32768);
  EXPECT_EQ(from_norm_float<uint8_t>(0.5f), 128);
  EXPECT_EQ(from_norm_float<uint8_t>(-0.1f), 0);
  EXPECT_EQ(from_norm_float<int32_t>(1.0f), 2147483647);
  EXPECT_EQ(from_norm_float<float>(3.5f), 3.5f);
  EXPECT_EQ(to_norm_float<int16_t>(32767), 1.0f);
  EXPECT_EQ(to_norm_float<uint8_t>(255), 1.0f);
  EXPECT_EQ(to_norm_float<int16_t>(-32767), -1.0f);
}

TEST(Resample, DownmixIsTheMeanOfTheChannels) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int channels : {1, 2, 3, 6}) {
    std::vector<float> in(size_t(50 * channels)), out(50);
    for (auto& v : in) v = u(rng);
    downmix_cpu(out.data(), in.data(), 50, channels);
    for (int64_t o = 0; o < 50; ++o) {
      double mean = 0;
      for (int c = 0; c < channels; ++c) mean += in[size_t(o * channels + c)];
      ASSERT_NEAR(out[size_t(o)], mean / channels, 1e-6) << channels << " " << o;
    }
  }
  std::vector<float> in{1.0f, 0.0f, -1.0f, -1.0f};
  std::vector<int16_t> out(2);
  downmix_cpu(out.data(), in.data(), 2, 2);
  EXPECT_EQ(out[0], 16384);
  EXPECT_EQ(out[1], -32767);
}

}  // namespace
}  // namespace stoker::kernels
