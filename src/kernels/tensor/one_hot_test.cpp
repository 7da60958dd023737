#include "stoker/kernels/tensor/one_hot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

TEST(OneHotClass, ReadsLabelsAsDaliDoes) {
  EXPECT_EQ(one_hot_class(int32_t(3)), 3);
  EXPECT_EQ(one_hot_class(int32_t(-1)), -1);
  EXPECT_EQ(one_hot_class(int64_t(1) << 32), 0);                 // the low 32 bits
  EXPECT_EQ(one_hot_class(uint32_t(3000000000u)), -1294967296);  // two's complement
  EXPECT_EQ(one_hot_class(0.7f), 0);                             // truncated toward zero
  EXPECT_EQ(one_hot_class(-0.5f), 0);
  EXPECT_EQ(one_hot_class(3.9), 3);
  EXPECT_EQ(one_hot_class(std::nanf("")), -1);
  EXPECT_EQ(one_hot_class(1e10f), -1);
}

TEST(OneHotValue, ConvertsAsCppOnX86) {
  EXPECT_EQ(one_hot_value<uint8_t>(300.0), 44);
  EXPECT_EQ(one_hot_value<uint8_t>(-2.5), 254);
  EXPECT_EQ(one_hot_value<int32_t>(2.5), 2);
  EXPECT_EQ(one_hot_value<int32_t>(-2.5), -2);
  EXPECT_EQ(one_hot_value<double>(0.1), double(0.1f));  // a float32 argument
}

// Random shapes, axes and labels (some outside [0, classes)) against the definition:
// out[o, c, i] = on where the label at (o, i) names class c, else off.
TEST(OneHotCpu, MatchesTheDefinition) {
  std::mt19937 rng(11);
  for (int t = 0; t < 200; ++t) {
    const int64_t outer = rng() % 5, inner = rng() % 4, classes = rng() % 6;
    std::vector<int16_t> labels(size_t(outer * inner));
    for (auto& v : labels) v = int16_t(int(rng() % 9) - 2);
    std::vector<float> got(size_t(outer * classes * inner), -7.f);
    one_hot_cpu(got.data(), labels.data(), outer, classes, inner, 2.5f, -1.f);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < classes; ++c)
        for (int64_t i = 0; i < inner; ++i) {
          const float expect = labels[size_t(o * inner + i)] == c ? 2.5f : -1.f;
          ASSERT_EQ(got[size_t((o * classes + c) * inner + i)], expect)
              << "trial " << t << " at " << o << ", " << c << ", " << i;
        }
  }
}

}  // namespace
}  // namespace stoker::kernels
