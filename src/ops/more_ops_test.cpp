// Operator-level checks, in C++, of operators whose Python tests compare with numpy: each
// against values written out here, an empty batch, and an error message.
#include <gtest/gtest.h>

#include <cmath>

#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

Batch floats(const std::vector<std::vector<float>>& samples, const std::vector<TensorShape>& shapes,
             TensorLayout layout = {}) {
  auto b = Batch::allocate(default_host_pool(), DType::kF32, shapes, std::move(layout));
  for (size_t i = 0; i < samples.size(); ++i)
    std::copy(samples[i].begin(), samples[i].end(), b.data_as<float>(int(i)));
  return b;
}

std::string error_of(OpRunner& r, std::vector<Batch> in, int batch = -1) {
  try {
    r.run(std::move(in), batch);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(NormalizeOp, PerSampleStatisticsAndEmptyBatch) {
  OpRunner r("normalize", {});
  auto out = r.run({floats({{1, 2, 3, 6}}, {TensorShape{4}})});
  // mean 3, population variance (4 + 1 + 0 + 9) / 4 = 3.5
  const double sd = std::sqrt(3.5);
  for (int k = 0; k < 4; ++k)
    EXPECT_NEAR(out[0].data_as<float>(0)[k], (std::vector<double>{1, 2, 3, 6}[size_t(k)] - 3) / sd,
                1e-6);
  auto empty = r.run({Batch::allocate(default_host_pool(), DType::kF32, {}, {})}, 0);
  EXPECT_EQ(empty[0].size(), 0);
  OpRunner bad("normalize", {{"axes", std::vector<int64_t>{2}}});
  EXPECT_EQ(error_of(bad, {floats({{1, 2}}, {TensorShape{2}})}),
            "normalize: axis 2 of a 1-D sample");
}

TEST(EraseOp, FillsTheRegionOnly) {
  OpRunner r("erase", {{"anchor", std::vector<double>{1, 1}},
                       {"shape", std::vector<double>{1, 2}},
                       {"fill_value", std::vector<double>{-1}}});
  std::vector<float> img(3 * 4, 5.f);
  auto out = r.run({floats({img}, {TensorShape{3, 4, 1}}, "HWC")});
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_EQ(out[0].data_as<float>(0)[y * 4 + x], (y == 1 && (x == 1 || x == 2)) ? -1.f : 5.f);
}

TEST(PasteOp, CanvasAndPosition) {
  OpRunner r(
      "paste",
      {{"ratio", 2.0}, {"paste_x", 0.0}, {"paste_y", 1.0}, {"fill_value", std::vector<double>{9}}});
  auto out = r.run({floats({{1, 2}}, {TensorShape{1, 2, 1}}, "HWC")});
  ASSERT_EQ(out[0].shape(0), (TensorShape{2, 4, 1}));  // each side twice the image's (DALI)
  const float* o = out[0].data_as<float>(0);
  EXPECT_EQ(o[1 * 4 + 0], 1.f);  // bottom-left corner
  EXPECT_EQ(o[1 * 4 + 1], 2.f);
  EXPECT_EQ(o[0], 9.f);
}

TEST(ColorSpaceConversionOp, GrayWeightsAndChannelCheck) {
  OpRunner r("color_space_conversion",
             {{"image_type", std::string("RGB")}, {"output_type", std::string("GRAY")}});
  auto out = r.run({testing::image_batch({{255, 0, 0, 0, 255, 0}}, {{1, 2, 3}})});
  EXPECT_EQ(out[0].data_as<uint8_t>(0)[0], 76);   // round(0.299 * 255)
  EXPECT_EQ(out[0].data_as<uint8_t>(0)[1], 150);  // round(0.587 * 255)
  OpRunner gray("color_space_conversion",
                {{"image_type", std::string("GRAY")}, {"output_type", std::string("RGB")}});
  EXPECT_EQ(error_of(gray, {testing::image_batch({{1, 2, 3}}, {{1, 1, 3}})}),
            "color_space_conversion: image_type needs 1 channels, sample 0 has 3");
}

TEST(ArithmeticOp, ExpressionTypesAndBroadcast) {
  OpRunner r("arithmetic", {{"expr", std::string("add(mul(&0,$2:i32),&1)")}});
  auto a = testing::scalar_batch<int32_t>({3, -4});
  auto b = floats({{0.5f}, {0.25f}}, {TensorShape{}, TensorShape{}});
  auto out = r.run({std::move(a), std::move(b)});
  ASSERT_EQ(out[0].dtype(), DType::kF32);  // int32 * int32 + float32
  EXPECT_EQ(out[0].data_as<float>(0)[0], 6.5f);
  EXPECT_EQ(out[0].data_as<float>(1)[0], -7.75f);
  OpRunner cmp("arithmetic", {{"expr", std::string("lt(&0,$0:i32)")}});
  auto c = cmp.run({testing::scalar_batch<int32_t>({3, -4})});
  ASSERT_EQ(c[0].dtype(), DType::kBool);
  EXPECT_EQ(c[0].data_as<bool>(1)[0], true);
  try {  // the expression is parsed when the operator is made
    OpRunner bad("arithmetic", {{"expr", std::string("add(&0")}});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "arithmetic: expected ',' at position 6 of 'add(&0'");
  }
}

TEST(JitterOp, DegreeOneIsTheIdentity) {
  OpRunner r("jitter", {{"nDegree", int64_t{1}}});
  std::vector<float> img{1, 2, 3, 4, 5, 6};
  auto out = r.run({floats({img}, {TensorShape{2, 3, 1}}, "HWC")});
  for (int k = 0; k < 6; ++k) EXPECT_EQ(out[0].data_as<float>(0)[k], img[size_t(k)]);
}

}  // namespace
}  // namespace stoker::ops
