#include "stoker/kernels/filter/laplacian.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace stoker::kernels {
namespace {

double binomial(int n, int k) {
  double r = 1;
  for (int j = 1; j <= k; ++j) r = r * (n - k + j) / j;
  return r;
}

// The windows from their definition: smoothing = binomial coefficients; derivative = the
// smoothing window of size - 2 convolved with [1, -2, 1].
std::vector<double> ref_window(bool derivative, int size) {
  std::vector<double> w(static_cast<size_t>(size));
  if (!derivative) {
    for (int k = 0; k < size; ++k) w[size_t(k)] = binomial(size - 1, k);
    return w;
  }
  const auto s = ref_window(false, size - 2);
  for (int k = 0; k < size; ++k) {
    double v = 0;
    for (int t = 0; t < 3; ++t) {
      const int j = k - t;
      if (j >= 0 && j < size - 2) v += (t == 1 ? -2.0 : 1.0) * s[size_t(j)];
    }
    w[size_t(k)] = v;
  }
  return w;
}

TEST(LaplacianWindows, AreBinomialsAndTheirSecondDifferences) {
  EXPECT_EQ(std::vector<float>(laplacian_window(true, 3), laplacian_window(true, 3) + 3),
            (std::vector<float>{1, -2, 1}));
  EXPECT_EQ(std::vector<float>(laplacian_window(false, 5), laplacian_window(false, 5) + 5),
            (std::vector<float>{1, 4, 6, 4, 1}));
  EXPECT_EQ(std::vector<float>(laplacian_window(true, 5), laplacian_window(true, 5) + 5),
            (std::vector<float>{1, 0, -2, 0, 1}));
  EXPECT_EQ(laplacian_window(false, 1)[0], 1.f);
  // Exact where float holds the binomials (below 2^24: sizes up to 25); beyond, within float's
  // precision (DALI's recurrence rounds, and we keep its rounding).
  for (int size = 3; size <= kLaplacianMaxWindow; size += 2)
    for (bool d : {false, true}) {
      const auto want = ref_window(d, size);
      const float* got = laplacian_window(d, size);
      for (int k = 0; k < size; ++k) {
        if (size <= 25)
          EXPECT_EQ(double(got[k]), want[size_t(k)]) << size << " " << d << " " << k;
        else
          EXPECT_NEAR(double(got[k]), want[size_t(k)], std::abs(want[size_t(k)]) * 1e-6 + 1);
      }
    }
}

// The sum over partials of the full (non-separable) convolution with the windows' outer
// product, in double, mirrored borders written out as a loop.
std::vector<double> ref_laplacian(const std::vector<float>& in, const LaplacianShape& s) {
  auto mirror = [](int64_t i, int64_t n) {
    if (n == 1) return int64_t(0);
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  };
  const int64_t v = laplacian_plane_size(s);
  std::vector<double> out(in.size(), 0.0);
  int64_t ext[3] = {1, 1, 1};
  for (int a = 0; a < s.axes; ++a) ext[3 - s.axes + a] = s.extent[a];
  for (int p = 0; p < s.axes; ++p) {
    std::vector<double> w[3] = {{1.0}, {1.0}, {1.0}};
    for (int a = 0; a < s.axes; ++a) w[3 - s.axes + a] = ref_window(a == p, s.window[p][a]);
    for (int64_t pl = 0; pl < s.planes; ++pl)
      for (int64_t z = 0; z < ext[0]; ++z)
        for (int64_t y = 0; y < ext[1]; ++y)
          for (int64_t x = 0; x < ext[2]; ++x)
            for (int64_t c = 0; c < s.channels; ++c) {
              double acc = 0;
              const int64_t rz = int64_t(w[0].size()) / 2, ry = int64_t(w[1].size()) / 2,
                            rx = int64_t(w[2].size()) / 2;
              for (int64_t i = 0; i < int64_t(w[0].size()); ++i)
                for (int64_t j = 0; j < int64_t(w[1].size()); ++j)
                  for (int64_t k = 0; k < int64_t(w[2].size()); ++k) {
                    const int64_t sz = mirror(z - rz + i, ext[0]), sy = mirror(y - ry + j, ext[1]);
                    const int64_t sx = mirror(x - rx + k, ext[2]);
                    acc += w[0][size_t(i)] * w[1][size_t(j)] * w[2][size_t(k)] *
                           in[size_t(pl * v + ((sz * ext[1] + sy) * ext[2] + sx) * s.channels + c)];
                  }
              out[size_t(pl * v + ((z * ext[1] + y) * ext[2] + x) * s.channels + c)] +=
                  double(s.scale[p]) * acc;
            }
  }
  return out;
}

struct Case {
  int axes;
  std::vector<int64_t> extent;
  int64_t planes, channels;
  std::vector<std::vector<int>> windows;
  std::vector<float> scale;
};

TEST(LaplacianCpu, MatchesTheDirectConvolution) {
  std::mt19937 rng(5);
  const std::vector<Case> cases{
      {2, {9, 13}, 1, 3, {{3, 3}, {3, 3}}, {1, 1}},
      {2, {7, 5}, 2, 1, {{5, 1}, {3, 7}}, {0.5f, -2}},
      {2, {1, 6}, 1, 2, {{3, 3}, {9, 9}}, {1, 1}},         // an extent of 1, a window past the edge
      {2, {4, 3}, 1, 1, {{11, 11}, {7, 13}}, {1, 0.25f}},  // windows wider than the image
      {1, {17}, 3, 1, {{7}}, {1}},
      {3, {4, 5, 6}, 1, 2, {{3, 3, 5}, {1, 5, 1}, {3, 3, 3}}, {1, 1, 0.5f}},
  };
  for (const auto& cs : cases) {
    LaplacianShape s;
    s.axes = cs.axes, s.planes = cs.planes, s.channels = cs.channels;
    for (int a = 0; a < cs.axes; ++a) {
      s.extent[a] = cs.extent[size_t(a)];
      s.scale[a] = cs.scale[size_t(a)];
      for (int b = 0; b < cs.axes; ++b) s.window[a][b] = cs.windows[size_t(a)][size_t(b)];
    }
    const int64_t total = s.planes * laplacian_plane_size(s);
    std::vector<float> in(static_cast<size_t>(total));
    for (auto& v : in) v = float(rng() % 256);
    std::vector<uint8_t> in8(in.begin(), in.end());
    const auto want = ref_laplacian(in, s);
    std::vector<float> got(in.size()), scratch;
    laplacian_cpu(in.data(), got.data(), s, scratch);
    std::vector<int16_t> got16(in.size());
    laplacian_cpu(in8.data(), got16.data(), s, scratch);
    for (size_t e = 0; e < in.size(); ++e) {
      ASSERT_NEAR(got[e], want[e], 1e-5 * std::max(1.0, std::abs(want[e]))) << e;
      // Integer inputs and windows: the float sums are exact, the int16 output saturated.
      const double r = std::round(std::clamp(want[e], -32768.0, 32767.0));
      ASSERT_EQ(got16[e], int16_t(r)) << e;
    }
  }
}

// half_round_away against float16's round-to-nearest-even, which it must equal but on exact
// ties, where it takes the neighbour of larger magnitude.
TEST(LaplacianHalf, RoundsToNearestTiesAwayFromZero) {
  std::mt19937 rng(9);
  auto check = [](float v) {
    const float even = float(float16(v));
    float want = even;
    if (std::isfinite(even)) {
      const uint16_t bits = float16(v).bits;
      for (int step : {-1, 1}) {
        const float other = float(float16::from_bits(uint16_t(bits + step)));
        if (std::isfinite(other) && double(other) - v == -(double(even) - v) &&
            std::abs(other) > std::abs(even))
          want = other;
      }
    }
    if (std::abs(v) >= 65520.f) want = v > 0 ? INFINITY : -INFINITY;
    ASSERT_EQ(half_round_away(v), want) << v;
  };
  for (int k = 0; k < 200000; ++k) {
    const float v =
        std::ldexp(float(int32_t(rng() % 2000001) - 1000000) / 1e6f, int(rng() % 50) - 30);
    check(v);
  }
  for (float v : {0.5f * 0.0009765625f, 1.0004882812f, 2049.f, -2051.f, 65519.f, 65520.f, 1e-8f,
                  2.9802322e-8f, -5.9604645e-8f, 0.f})
    check(v);
  EXPECT_EQ(half_round_away(1.0004882812f), 1.0009765625f);  // a tie: away from zero
  EXPECT_EQ(half_round_away(2.9802322e-8f), 5.9604645e-8f);  // half the smallest subnormal
}

TEST(LaplacianCpu, EmptySamplesWriteNothing) {
  LaplacianShape s;
  s.extent[0] = 0, s.extent[1] = 5;
  std::vector<float> scratch;
  laplacian_cpu(static_cast<const uint8_t*>(nullptr), static_cast<uint8_t*>(nullptr), s, scratch);
  EXPECT_TRUE(scratch.empty());
}

}  // namespace
}  // namespace stoker::kernels
