#include <gtest/gtest.h>

#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

TEST(CoinFlipOp, FrequencyAndIndependenceFromThreads) {
  OpRunner a("random.coin_flip", {{"probability", 0.3}}, 1, 7, 2);
  OpRunner b("random.coin_flip", {{"probability", 0.3}}, 4, 7, 2);
  int ones = 0, total = 0;
  for (int it = 0; it < 20; ++it) {
    auto x = a.run({}, 256), y = b.run({}, 256);
    ASSERT_EQ(x[0].dtype(), DType::kI32);
    ASSERT_EQ(x[0].shape(0), TensorShape{});
    for (int i = 0; i < 256; ++i) {
      ASSERT_EQ(x[0].data_as<int32_t>(i)[0], y[0].data_as<int32_t>(i)[0]);
      ones += x[0].data_as<int32_t>(i)[0];
      ++total;
    }
  }
  EXPECT_NEAR(double(ones) / total, 0.3, 0.02);
}

TEST(UniformOp, RangeValuesAndShape) {
  OpRunner r("random.uniform",
             {{"range", std::vector<double>{2, 5}}, {"shape", std::vector<int64_t>{3}}});
  auto o = r.run({}, 100);
  double sum = 0;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(o[0].shape(i), TensorShape{3});
    for (int k = 0; k < 3; ++k) {
      float v = o[0].data_as<float>(i)[k];
      ASSERT_GE(v, 2.f);
      ASSERT_LT(v, 5.f);
      sum += v;
    }
  }
  EXPECT_NEAR(sum / 300, 3.5, 0.2);
  OpRunner d("random.uniform", {{"values", std::vector<double>{-1, 7}}});
  auto v = d.run({}, 50);
  for (int i = 0; i < 50; ++i) {
    float x = v[0].data_as<float>(i)[0];
    ASSERT_TRUE(x == -1.f || x == 7.f);
  }
}

TEST(CoinFlipOp, RejectsBadProbabilityPerSample) {
  OpRunner r("random.coin_flip", {});
  try {
    r.run({}, 2, {{"probability", testing::scalar_batch<float>({0.5f, 1.5f})}});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "sample 1: probability must be in [0, 1], got 1.5");
  }
}

}  // namespace
}  // namespace stoker::ops
