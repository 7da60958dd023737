// The reductions' CPU kernel against references written out from the definitions: exact
// integer sums (wrapping), DALI's pairwise float order spelled out by hand, and DALI 2.4's
// measured results for its conversions and overflows (the values in comments were printed by
// DALI 2.4's CPU operators).
#include "stoker/kernels/reduce/reduce_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

ReducePlan plan(const TensorShape& s, std::vector<bool> mask) { return plan_reduce(s, mask); }

template <Reduction R, typename Out, typename In>
std::vector<Out> run(const std::vector<In>& x, const TensorShape& s, std::vector<bool> mask,
                     const std::vector<float>& mean = {}, int64_t ddof = 0) {
  const ReducePlan p = plan(s, mask);
  std::vector<Out> out(size_t(p.outputs));
  reduce_cpu<R>(x.data(), out.data(), p, mean.empty() ? nullptr : mean.data(),
                mean.size() == 1 ? 0 : 1, reduce_norm(p.count - ddof));
  return out;
}

TEST(ReduceCpu, PlansMergeNeighbouringAxes) {
  const ReducePlan p = plan({2, 3, 4, 5}, {true, true, false, true});
  ASSERT_EQ(p.nred, 2);
  EXPECT_EQ(p.red_size[0], 6);
  EXPECT_EQ(p.red_stride[0], 20);
  EXPECT_EQ(p.red_size[1], 5);
  EXPECT_EQ(p.red_stride[1], 1);
  ASSERT_EQ(p.nkeep, 1);
  EXPECT_EQ(p.keep_size[0], 4);
  EXPECT_EQ(p.keep_stride[0], 5);
  EXPECT_EQ(p.outputs, 4);
  EXPECT_EQ(p.count, 30);
  const ReducePlan none = plan({2, 3}, {false, false});
  EXPECT_EQ(none.nred, 0);
  EXPECT_EQ(none.nkeep, 1);
  EXPECT_EQ(none.outputs, 6);
  const ReducePlan scalar = plan({}, {});
  EXPECT_EQ(scalar.outputs, 1);
  EXPECT_EQ(scalar.count, 1);
}

// Integer sums wrap in the output type: any order gives the exact sum modulo 2^bits.
TEST(ReduceCpu, IntegerSumsOverAnyAxesWrapInTheOutputType) {
  std::mt19937 rng(3);
  const TensorShape s({3, 5, 7});
  std::vector<uint8_t> x(105);
  for (auto& v : x) v = uint8_t(rng());
  for (int m = 0; m < 8; ++m) {
    const std::vector<bool> mask{bool(m & 1), bool(m & 2), bool(m & 4)};
    const auto wide = run<Reduction::kSum, uint64_t>(x, s, mask);
    const auto narrow = run<Reduction::kSum, uint8_t>(x, s, mask);
    // Reference: accumulate each element into its output position (row-major over kept axes).
    std::vector<uint64_t> ref(wide.size(), 0);
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 5; ++b)
        for (int c = 0; c < 7; ++c) {
          int64_t o = 0;
          if (!mask[0]) o = o * 3 + a;
          if (!mask[1]) o = o * 5 + b;
          if (!mask[2]) o = o * 7 + c;
          ref[size_t(o)] += x[size_t((a * 5 + b) * 7 + c)];
        }
    ASSERT_EQ(wide, ref) << "mask " << m;
    for (size_t o = 0; o < ref.size(); ++o) EXPECT_EQ(narrow[o], uint8_t(ref[o]));
  }
}

// DALI's order: a run of more than 32 values is split into halves, each summed from 0 alone.
TEST(ReduceCpu, FloatSumsFollowDalisPairwiseOrder) {
  std::vector<float> x(40, 1.f);
  x[0] = 1e8f;  // sequentially, every 1 added to 1e8 is lost
  const float first = [&] {
    float t = 0.f;
    for (int i = 0; i < 20; ++i) t += x[size_t(i)];
    return t;
  }();
  const float expected = first + 20.f;  // 1e8 (19 ones lost) + the second half's 20
  EXPECT_EQ((run<Reduction::kSum, float>(x, {40}, {true})[0]), expected);
  EXPECT_NE(expected, 1e8f);
  // Two reduced runs (axis 1 kept between them): extent 4 x 10 values > 32 splits the outer run
  // in two halves of 2 rows, each summed row by row.
  std::vector<float> y(40);
  for (int i = 0; i < 40; ++i) y[size_t(i)] = i % 10 == 0 ? 1e8f * float(i / 10 + 1) : 0.75f;
  auto row = [&](int r) {
    float t = 0.f;
    for (int i = 0; i < 10; ++i) t += y[size_t(r * 10 + i)];
    return t;
  };
  const float want = (0.f + row(0) + row(1)) + (0.f + row(2) + row(3));
  EXPECT_EQ((run<Reduction::kSum, float>(y, {4, 1, 10}, {true, false, true})[0]), want);
}

TEST(ReduceCpu, MeansScaleInFloatAndTruncateAsX86) {
  const std::vector<uint8_t> a{1, 2, 2};
  EXPECT_FLOAT_EQ((run<Reduction::kMean, float>(a, {3}, {true})[0]), 5.f / 3.f);
  EXPECT_EQ((run<Reduction::kMean, uint8_t>(a, {3}, {true})[0]), 1);  // 1.67 truncated
  const std::vector<int32_t> big{2147483647, 2147483647};
  EXPECT_EQ((run<Reduction::kMean, int32_t>(big, {2}, {true})[0]), -1);  // the sum wrapped to -2
  const std::vector<uint64_t> huge{~uint64_t(0), ~uint64_t(0)};
  EXPECT_EQ((run<Reduction::kMean, uint64_t>(huge, {2}, {true})[0]), uint64_t(1) << 63);
  const std::vector<uint32_t> u32{4000000000u, 4000000000u, 5};
  EXPECT_EQ((run<Reduction::kMean, uint32_t>(u32, {3}, {true})[0]), 1235010944u);  // DALI 2.4
  const std::vector<int8_t> neg{-3, -4};
  EXPECT_EQ((run<Reduction::kMean, int8_t>(neg, {2}, {true})[0]), -3);  // toward zero
  // No elements: 0 * inf = NaN, then the integer patterns of cvttss2si.
  EXPECT_TRUE(std::isnan(run<Reduction::kMean, float>(std::vector<float>{}, {0}, {true})[0]));
  EXPECT_EQ((run<Reduction::kMean, uint8_t>(std::vector<uint8_t>{}, {0}, {true})[0]), 0);
  EXPECT_EQ((run<Reduction::kMean, int32_t>(std::vector<int32_t>{}, {0}, {true})[0]), INT32_MIN);
  EXPECT_EQ((run<Reduction::kMean, int64_t>(std::vector<int64_t>{}, {0}, {true})[0]), INT64_MIN);
  EXPECT_EQ((run<Reduction::kMean, uint64_t>(std::vector<uint64_t>{}, {0}, {true})[0]), uint64_t(1)
                                                                                            << 63);
}

TEST(ReduceCpu, SquaresAreTakenInThePromotedInputType) {
  const std::vector<uint8_t> a{255, 255, 255};
  EXPECT_EQ((run<Reduction::kRms, uint8_t>(a, {3}, {true})[0]), 1);  // 65025 wraps to 1 in uint8
  EXPECT_FLOAT_EQ((run<Reduction::kRms, float>(a, {3}, {true})[0]), 255.f);
  const std::vector<uint16_t> b{65535};  // 65535^2 overflows int: -131071
  EXPECT_EQ((run<Reduction::kMeanSquare, float>(b, {1}, {true})[0]), -131071.f);
  EXPECT_EQ((run<Reduction::kMeanSquare, uint64_t>(b, {1}, {true})[0]), 0u);
  const std::vector<int32_t> c{2147483647, 3};  // int32 squares in 64 bits
  EXPECT_FLOAT_EQ((run<Reduction::kMeanSquare, float>(c, {2}, {true})[0]),
                  float(double(2147483647) * 2147483647 + 9) * 0.5f);
  const std::vector<int64_t> d{int64_t(1) << 32, int64_t(1) << 32};  // 2^64 wraps to 0
  EXPECT_EQ((run<Reduction::kMeanSquare, float>(d, {2}, {true})[0]), 0.f);
  const std::vector<uint8_t> e{1, 2, 2, 3};  // (1 + 4) / 2, (4 + 9) / 2, truncated
  EXPECT_EQ((run<Reduction::kMeanSquare, uint64_t>(e, {2, 2}, {true, false})),
            (std::vector<uint64_t>{2, 6}));
}

TEST(ReduceCpu, MinMaxSkipNaNAndStartFromTheFiniteExtremes) {
  const float nan = std::nanf(""), inf = INFINITY;
  EXPECT_EQ((run<Reduction::kMax, float>(std::vector<float>{1, nan, 3}, {3}, {true})[0]), 3.f);
  EXPECT_EQ((run<Reduction::kMin, float>(std::vector<float>{nan, 1, 3}, {3}, {true})[0]), 1.f);
  EXPECT_EQ((run<Reduction::kMin, float>(std::vector<float>{inf, inf}, {2}, {true})[0]),
            3.40282347e38f);
  EXPECT_EQ((run<Reduction::kMax, float>(std::vector<float>{}, {0}, {true})[0]), -3.40282347e38f);
  EXPECT_EQ((run<Reduction::kMin, uint8_t>(std::vector<uint8_t>{}, {0, 3}, {true, false})),
            (std::vector<uint8_t>{255, 255, 255}));
  EXPECT_EQ((run<Reduction::kMax, int8_t>(std::vector<int8_t>{}, {0, 2}, {true, false})),
            (std::vector<int8_t>{-128, -128}));
  std::vector<int16_t> x(100);
  for (int i = 0; i < 100; ++i) x[size_t(i)] = int16_t((i * 37) % 101 - 50);
  const auto mn = run<Reduction::kMin, int16_t>(x, {10, 10}, {false, true});
  for (int r = 0; r < 10; ++r)
    EXPECT_EQ(mn[size_t(r)], *std::min_element(x.begin() + r * 10, x.begin() + r * 10 + 10));
}

TEST(ReduceCpu, NoAxesConvertEachElementAlone) {
  const float nan = std::nanf(""), inf = INFINITY;
  const std::vector<float> x{-0.f, inf, -inf, nan};
  const auto mn = run<Reduction::kMin, float>(x, {4}, {false});
  EXPECT_TRUE(std::signbit(mn[0]));  // -0 kept (no neutral 0 added)
  EXPECT_EQ(mn[1], inf);
  EXPECT_EQ(mn[2], -inf);
  EXPECT_TRUE(std::isnan(mn[3]));
  const auto sq = run<Reduction::kRms, float>(std::vector<float>{-2.f, 3.f}, {2}, {false});
  EXPECT_EQ(sq, (std::vector<float>{2.f, 3.f}));
}

TEST(ReduceCpu, VarianceAndStdDevAboutTheGivenMean) {
  const std::vector<float> x{1, 2, 3, 4, 6, 8};
  const std::vector<float> mean{2.f, 6.f};
  EXPECT_EQ((run<Reduction::kVariance, float>(x, {2, 3}, {false, true}, mean)),
            (std::vector<float>{2.f / 3.f, 8.f / 3.f}));
  EXPECT_EQ((run<Reduction::kVariance, float>(x, {2, 3}, {false, true}, mean, 1)),
            (std::vector<float>{1.f, 4.f}));
  const auto inf = run<Reduction::kVariance, float>(x, {2, 3}, {false, true}, mean, 3);
  EXPECT_TRUE(std::isinf(inf[0]) && std::isinf(inf[1]));  // 1 / (3 - 3)
  EXPECT_EQ((run<Reduction::kVariance, float>(x, {2, 3}, {false, true}, mean, 4)),
            (std::vector<float>{-2.f, -8.f}));  // a negative divisor, as DALI
  const auto sd = run<Reduction::kStdDev, float>(x, {2, 3}, {false, true}, mean);
  EXPECT_FLOAT_EQ(sd[1], std::sqrt(8.f / 3.f));
  const std::vector<uint8_t> u{1, 2, 3, 4, 6, 8};  // integer inputs: (float(x) - mean)^2
  const auto v = run<Reduction::kVariance, float>(u, {2, 3}, {false, true}, {4.f});  // one mean
  EXPECT_EQ(v[0], 14.f * float(1.0 / 3));  // the scale is float(1.0 / count): 1 ulp off 14/3
  EXPECT_EQ(v[1], 20.f * float(1.0 / 3));
}

TEST(ReduceCpu, ConversionsFollowX86) {
  EXPECT_EQ(x86_convert<uint8_t>(300.7f), uint8_t(44));  // low bits of 300
  EXPECT_EQ(x86_convert<int8_t>(-1.9f), int8_t(-1));
  EXPECT_EQ(x86_convert<uint32_t>(5e9f), uint32_t(uint64_t(5e9f)));
  EXPECT_EQ(x86_convert<uint32_t>(std::nanf("")), 0u);
  EXPECT_EQ(x86_convert<int32_t>(3e9f), INT32_MIN);
  EXPECT_EQ(x86_convert<uint64_t>(1.5e19f), uint64_t(1.5e19f));
  EXPECT_EQ(x86_convert<uint64_t>(2e19f), 0u);  // 2^64 and above: indefinite ^ 2^63
  EXPECT_EQ(x86_convert<int64_t>(-1e19f), INT64_MIN);
}

}  // namespace
}  // namespace stoker::kernels
