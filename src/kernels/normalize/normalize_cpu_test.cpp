// normalize's CPU kernels against the definition, written out per element.
#include "stoker/kernels/normalize/normalize_cpu.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace stoker::kernels {
namespace {

TEST(NormalizeCpu, GroupsAreThePositionsOfTheAxesNotReduced) {
  const TensorShape s({2, 3, 4});
  NormalizeReducer all(s, {}), hw(s, {1, 2}), c(s, {0, 1});
  EXPECT_EQ(all.groups, 1);
  EXPECT_EQ(hw.groups, 2);
  EXPECT_EQ(c.groups, 4);
  for (int64_t k = 0; k < 24; ++k) {
    EXPECT_EQ(all.group(k), 0);
    EXPECT_EQ(hw.group(k), k / 12);  // axis 0 kept
    EXPECT_EQ(c.group(k), k % 4);    // axis 2 kept
  }
}

TEST(NormalizeCpu, SumsSquaresAndValuesFollowTheFormula) {
  const TensorShape s({3, 2});  // reduce axis 0: two groups (columns)
  const std::vector<double> x{1, 10, 2, 20, 6, 60};
  NormalizeReducer r(s, {0});
  std::vector<double> sum(2, 0.0), sq(2, 0.0);
  normalize_sums_cpu(x.data(), 6, r, sum.data());
  EXPECT_EQ(sum, (std::vector<double>{9, 90}));
  const std::vector<double> mean{3, 30};
  normalize_squares_cpu(x.data(), 6, r, mean.data(), sq.data());
  EXPECT_EQ(sq, (std::vector<double>{4 + 1 + 9, 400 + 100 + 900}));
  const std::vector<double> inv{1 / std::sqrt(14.0 / 3), 1 / std::sqrt(1400.0 / 3)};
  std::vector<float> f(6);
  normalize_cpu(x.data(), 6, r, mean.data(), inv.data(), 2.0, 0.5, f.data());
  for (int k = 0; k < 6; ++k)
    EXPECT_FLOAT_EQ(f[size_t(k)], float((x[size_t(k)] - mean[size_t(k % 2)]) * inv[size_t(k % 2)] * 2 + 0.5));
  std::vector<uint8_t> u(6);  // integers: rounded half away from zero, saturated
  const std::vector<double> one{1, 1}, zero{0, 0};
  const std::vector<double> y{-3, 2.5, 300, 0.49, 1.5, 255.5};
  normalize_cpu(y.data(), 6, r, zero.data(), one.data(), 1.0, 0.0, u.data());
  EXPECT_EQ(u, (std::vector<uint8_t>{0, 3, 255, 0, 2, 255}));
}

}  // namespace
}  // namespace stoker::kernels
