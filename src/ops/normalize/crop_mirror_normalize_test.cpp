#include <gtest/gtest.h>

#include "stoker/ops/op_test_util.hpp"
#include "stoker/testing/image_reference.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;
namespace ref = stoker::testing;

TEST(CropMirrorNormalizeOp, CropMirrorPerSampleChwF16) {
  const int64_t H = 12, W = 15;
  auto img = ref::random_image_u8(H, W, 3, 21);
  std::vector<double> mean{123.675, 116.28, 103.53}, sd{58.395, 57.12, 57.375};
  OpRunner r("crop_mirror_normalize", {{"crop", std::vector<double>{8, 9}},
                                       {"crop_pos_x", 0.25},
                                       {"crop_pos_y", 1.0},
                                       {"mean", mean},
                                       {"std", sd},
                                       {"dtype", std::string("float16")}});
  auto out = r.run({testing::image_batch({img, img}, {{H, W, 3}, {H, W, 3}})}, 2,
                   {{"mirror", testing::scalar_batch<int32_t>({0, 1})}});
  const Batch& b = out[0];
  ASSERT_EQ(b.dtype(), DType::kF16);
  ASSERT_EQ(b.layout().str(), "CHW");
  ASSERT_EQ(b.shape(1), (TensorShape{3, 8, 9}));
  int64_t y0 = 4, x0 = int64_t(std::floor(0.25 * 6 + 0.5));  // = 2
  auto full = ref::to_ref(img.data(), H, W, 3, W * 3);
  for (int s = 0; s < 2; ++s)
    for (int c = 0; c < 3; ++c)
      for (int64_t y = 0; y < 8; ++y)
        for (int64_t x = 0; x < 9; ++x) {
          int64_t sx = s ? x0 + 8 - x : x0 + x;
          double expect = (full.at(y0 + y, sx, c) - mean[size_t(c)]) / sd[size_t(c)];
          float got = float(b.data_as<float16>(s)[(c * 8 + y) * 9 + x]);
          ASSERT_NEAR(got, expect, 2e-3 * std::max(1.0, std::fabs(expect)));
        }
}

TEST(CropMirrorNormalizeOp, ChannelCountMismatchIsReported) {
  auto img = ref::random_image_u8(4, 4, 3, 1);
  OpRunner r("crop_mirror_normalize", {{"mean", std::vector<double>{1, 2}}});
  try {
    r.run({testing::image_batch({img}, {{4, 4, 3}})});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "sample 0: crop_mirror_normalize: mean and std need 1 or 3 values "
                 "(one per channel), got 2");
  }
}

}  // namespace
}  // namespace stoker::ops
