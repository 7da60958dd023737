// to_decibels, preemphasis_filter and nonsilent_region's kernels against their formulas: the
// decibel formula in double, the filter's recurrence by hand for every border and the types'
// conversions, and the moving mean square summed window by window.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "stoker/kernels/signal/decibels.hpp"
#include "stoker/kernels/signal/nonsilent_region.hpp"
#include "stoker/kernels/signal/preemphasis.hpp"

namespace stoker::kernels {
namespace {

TEST(ToDecibels, EqualsTheFormula) {
  const std::vector<float> x = {4.f, 1.f, 0.25f, 1e-12f, 0.f};
  std::vector<float> out(x.size());
  to_decibels_cpu(x.data(), 5, {10.f, 0.f, -80.f}, out.data());  // reference: the maximum, 4
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = 10 * std::log10(std::max(1e-8, double(x[i]) / 4));
    EXPECT_NEAR(out[i], want, 1e-4) << i;
  }
  to_decibels_cpu(x.data(), 5, {20.f, 0.5f, -200.f}, out.data());
  EXPECT_NEAR(out[0], 20 * std::log10(8.0), 1e-4);
  EXPECT_NEAR(out[3], -200.0, 1e-3);  // 2e-12 is below the cut-off ratio 10^-10
  EXPECT_NEAR(out[4], -200.0, 1e-3);
}

TEST(ToDecibels, SilenceIsAtTheCutOff) {
  const std::vector<float> zeros(3, 0.f);
  std::vector<float> out(3);
  to_decibels_cpu(zeros.data(), 3, {10.f, 0.f, -60.f}, out.data());
  for (float v : out) EXPECT_NEAR(v, -60.f, 1e-4);
}

template <typename Out, typename In>
std::vector<Out> preemph(const std::vector<In>& x, float coeff, PreemphasisBorder border) {
  std::vector<Out> out(x.size());
  preemphasis_cpu(x.data(), int64_t(x.size()), coeff, border, out.data());
  return out;
}

TEST(Preemphasis, EveryBorder) {
  const std::vector<float> x = {3.f, 200.f, 7.f};
  const float c = 0.5f;
  EXPECT_EQ((preemph<float>(x, c, PreemphasisBorder::kClamp)),
            (std::vector<float>{3 - c * 3, 200 - c * 3, 7 - c * 200}));
  EXPECT_EQ((preemph<float>(x, c, PreemphasisBorder::kReflect)),
            (std::vector<float>{3 - c * 200, 200 - c * 3, 7 - c * 200}));
  EXPECT_EQ((preemph<float>(x, c, PreemphasisBorder::kZero)),
            (std::vector<float>{3, 200 - c * 3, 7 - c * 200}));
  // One sample: reflect mirrors it onto itself.
  EXPECT_EQ((preemph<float>(std::vector<float>{4.f}, c, PreemphasisBorder::kReflect)),
            (std::vector<float>{2.f}));
  EXPECT_TRUE((preemph<float>(std::vector<float>{}, c, PreemphasisBorder::kReflect)).empty());
}

TEST(Preemphasis, ConvertsAsDali) {
  // Halves round away from zero, results saturate, integer inputs are computed in float.
  EXPECT_EQ((preemph<int32_t>(std::vector<int32_t>{1, 3, -1, -4}, 0.5f, PreemphasisBorder::kClamp)),
            (std::vector<int32_t>{1, 3, -3, -4}));
  EXPECT_EQ((preemph<uint8_t>(std::vector<int16_t>{-100, 400}, 0.5f, PreemphasisBorder::kZero)),
            (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(
      (preemph<double>(std::vector<int32_t>{16777217, 16777217}, 0.5f, PreemphasisBorder::kClamp)),
      (std::vector<double>{8388608.0, 8388608.0}));
  // float64 in double.
  const double big = 1e10 + 1;
  EXPECT_EQ((preemph<double>(std::vector<double>{big, 3.3}, 0.97f, PreemphasisBorder::kZero))[1],
            3.3 - double(0.97f) * big);
  // coeff 0 converts as it is (saturating).
  EXPECT_EQ(
      (preemph<int32_t>(std::vector<int64_t>{int64_t(1) << 40, 5}, 0.f, PreemphasisBorder::kClamp)),
      (std::vector<int32_t>{2147483647, 5}));
}

template <typename T>
void expect_mean_square(const std::vector<T>& x, int64_t window, int64_t reset, double tol) {
  std::vector<float> out(x.size());
  moving_mean_square(x.data(), int64_t(x.size()), window, reset, out.data());
  for (int64_t i = 0; i < int64_t(x.size()); ++i) {
    double sum = 0;
    for (int64_t j = std::max<int64_t>(0, i - window + 1); j <= i; ++j)
      sum += double(x[size_t(j)]) * double(x[size_t(j)]);
    EXPECT_NEAR(out[size_t(i)], sum / double(window), tol * (1 + sum / double(window))) << i;
  }
}

// The blocks that move eight at a time give the values of one block after the other (the
// sequential sums, in DALI's order), bit for bit: leading blocks cut at 0, a partial last block,
// fewer than eight blocks, intervals shorter than the window.
template <typename T>
void expect_blocked_equals_sequential(size_t n, int64_t window, int64_t reset) {
  std::mt19937 rng(uint32_t(n + size_t(window) + size_t(reset)));
  std::normal_distribution<float> d(0.f, 1000.f);
  std::vector<T> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = T(d(rng) * (i % 5000 < 2500 ? 1.f : 1e-3f));
  std::vector<float> got(n), want(n);
  moving_mean_square(x.data(), int64_t(n), window, reset, got.data());
  const float f = 1.f / float(window);
  for (int64_t start = 0; start < int64_t(n); start += reset) {
    float sum = 0;
    for (int64_t i = std::max<int64_t>(start - window + 1, 0); i <= start; ++i)
      sum += float(x[size_t(i)]) * float(x[size_t(i)]);
    want[size_t(start)] = sum * f;
    for (int64_t i = start + 1; i < std::min<int64_t>(int64_t(n), start + reset); ++i) {
      if (i >= window) sum -= float(x[size_t(i - window)]) * float(x[size_t(i - window)]);
      sum += float(x[size_t(i)]) * float(x[size_t(i)]);
      want[size_t(i)] = sum * f;
    }
  }
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << "n " << n << " window " << window << " reset " << reset << " at " << i;
}

TEST(NonsilentRegion, BlocksAtOnceEqualBlocksInTurn) {
  expect_blocked_equals_sequential<float>(176003, 2048, 8192);
  expect_blocked_equals_sequential<float>(8192 * 16, 2048, 8192);
  expect_blocked_equals_sequential<float>(8192 * 5 + 7, 2048, 8192);  // fewer than eight
  expect_blocked_equals_sequential<float>(100000, 300, 100);          // intervals < window
  expect_blocked_equals_sequential<float>(100000, 1, 64);
  expect_blocked_equals_sequential<int32_t>(50000, 64, 512);
  expect_blocked_equals_sequential<double>(50000, 100, 1000);
}

// The AVX2 loop for float signals gives the generic loop's values bit for bit: windows and
// intervals that are not multiples of eight (partial vectors at both ends of a block), loud
// passages after quiet ones (the drift), tiny values (subnormal squares).
TEST(NonsilentRegion, SimdLoopEqualsGenericLoop) {
  struct Case {
    size_t n;
    int64_t window, reset;
  };
  for (const Case c : {Case{176003, 2048, 8192}, Case{200000, 2000, 6003}, Case{50000, 7, 21},
                       Case{90000, 301, 903}, Case{70000, 1, 64}, Case{8192 * 9, 2048, 8192}}) {
    std::mt19937 rng(uint32_t(c.n));
    std::normal_distribution<float> d(0.f, 1.f);
    std::vector<float> x(c.n), simd(c.n), generic(c.n);
    for (size_t i = 0; i < c.n; ++i) {
      const float scale = i % 30000 < 15000 ? 1e3f : (i % 7 == 0 ? 1e-22f : 1e-3f);
      x[i] = d(rng) * scale;
    }
    moving_mean_square(x.data(), int64_t(c.n), c.window, c.reset, simd.data(), true);
    moving_mean_square(x.data(), int64_t(c.n), c.window, c.reset, generic.data(), false);
    for (size_t i = 0; i < c.n; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(simd[i]), std::bit_cast<uint32_t>(generic[i]))
          << "n " << c.n << " window " << c.window << " reset " << c.reset << " at " << i;
  }
}

// power_max with AVX2 is std::max from p[0] on: NaNs (first or later) and infinities included.
TEST(NonsilentRegion, SimdMaxEqualsSequentialMax) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(0.f, 1.f);
  std::vector<float> p(1003);
  for (auto& v : p) v = d(rng);
  const auto sequential = [](const std::vector<float>& v) {
    float m = v[0];
    for (size_t i = 1; i < v.size(); ++i) m = std::max(m, v[i]);
    return m;
  };
  const auto same = [](float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); };
  for (size_t at : {size_t(0), size_t(3), size_t(500), size_t(1002)}) {
    auto q = p;
    q[at] = 7.f;  // the maximum in the vector part, the tail or the first value
    EXPECT_TRUE(same(power_max(q.data(), int64_t(q.size())), sequential(q))) << at;
    q[at] = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(same(power_max(q.data(), int64_t(q.size())), sequential(q))) << at;
    q[at] = std::numeric_limits<float>::quiet_NaN();  // first: NaN; later: passed over
    EXPECT_TRUE(same(power_max(q.data(), int64_t(q.size())), sequential(q))) << at;
    EXPECT_TRUE(same(power_max(q.data(), int64_t(q.size()), false), sequential(q))) << at;
  }
  for (int64_t n = 1; n < 20; ++n)  // shorter than a vector, and a partial one after it
    EXPECT_TRUE(same(power_max(p.data(), n), sequential(std::vector<float>(p.begin(), p.begin() + n))));
}

TEST(NonsilentRegion, MovingMeanSquareIsTheWindowedMean) {
  std::mt19937 rng(2);
  std::normal_distribution<float> d;
  std::vector<float> f(3000);
  for (auto& v : f) v = d(rng);
  expect_mean_square(f, 64, 256, 1e-5);
  expect_mean_square(f, 64, -1, 1e-4);
  expect_mean_square(f, 5000, 8192, 1e-5);  // a window longer than the signal
  std::vector<int16_t> s(3000);
  for (auto& v : s) v = int16_t(d(rng) * 8000);
  expect_mean_square(s, 100, 8192, 2.5e-7);  // exact in int64, then one float product
}

TEST(NonsilentRegion, BoundsAsDali) {
  const std::vector<float> p = {0, 0, 0, 0, 50, 50, 0, 0};
  EXPECT_EQ(nonsilent_bounds(p.data(), 8, 20.f, 1), (std::pair<int64_t, int64_t>{4, 2}));
  // Moved back by window - 1, not before 0; the end stays.
  EXPECT_EQ(nonsilent_bounds(p.data(), 8, 20.f, 3), (std::pair<int64_t, int64_t>{2, 4}));
  EXPECT_EQ(nonsilent_bounds(p.data(), 8, 20.f, 10), (std::pair<int64_t, int64_t>{0, 6}));
  EXPECT_EQ(nonsilent_bounds(p.data(), 8, 60.f, 3), (std::pair<int64_t, int64_t>{0, 0}));
  const std::vector<float> loud_start = {50, 0, 0};
  EXPECT_EQ(nonsilent_bounds(loud_start.data(), 3, 20.f, 3), (std::pair<int64_t, int64_t>{0, 1}));
  EXPECT_NEAR(nonsilent_threshold(2.f, -30.f), 2e-3, 1e-9);
}

}  // namespace
}  // namespace stoker::kernels
