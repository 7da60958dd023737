// SequenceOperator: sequences unfolded into frames, folded back as views (or gathered where the
// frame axis moves), per-frame arguments, the frame named in errors.
#include "stoker/ops/sequence_operator.hpp"

#include <gtest/gtest.h>

#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

// Sequences of frames(i) frames, h x w x c, element k of sample i = 50 * i + k.
Batch sequences(const std::vector<int64_t>& frames, int64_t h, int64_t w, int64_t c) {
  std::vector<TensorShape> shapes;
  for (int64_t f : frames) shapes.push_back(TensorShape{f, h, w, c});
  auto b = Batch::allocate(default_host_pool(), DType::kU8, shapes, "FHWC");
  for (int i = 0; i < b.size(); ++i)
    for (int64_t k = 0; k < shapes[size_t(i)].volume(); ++k)
      b.data_as<uint8_t>(i)[k] = uint8_t(50 * i + k);
  return b;
}

TEST(SequenceOperator, FramesRunAsImagesAndFoldBackAsViews) {
  OpRunner flip("flip", {{"horizontal", int64_t{1}}});
  auto out = flip.run({sequences({3, 2}, 1, 2, 1)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].layout().str(), "FHWC");
  EXPECT_EQ(out[0].shape(0), (TensorShape{3, 1, 2, 1}));
  EXPECT_EQ(out[0].shape(1), (TensorShape{2, 1, 2, 1}));
  EXPECT_TRUE(out[0].is_contiguous());  // the operator's one output buffer, not a copy
  const uint8_t* a = out[0].data_as<uint8_t>(0);
  EXPECT_EQ(std::vector<uint8_t>(a, a + 6), (std::vector<uint8_t>{1, 0, 3, 2, 5, 4}));
  const uint8_t* b = out[0].data_as<uint8_t>(1);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 4), (std::vector<uint8_t>{51, 50, 53, 52}));
}

TEST(SequenceOperator, OutputLayoutPlacesTheFrameAxis) {
  // 2 frames of 1 x 2 x 2 (HWC): CFHW holds channel 0 of both frames, then channel 1.
  OpRunner cmn("crop_mirror_normalize",
               {{"output_layout", std::string("CFHW")}, {"dtype", std::string("uint8")}});
  auto out = cmn.run({sequences({2}, 1, 2, 2)});
  EXPECT_EQ(out[0].layout().str(), "CFHW");
  EXPECT_EQ(out[0].shape(0), (TensorShape{2, 2, 1, 2}));
  const uint8_t* p = out[0].data_as<uint8_t>(0);
  // frame f, pixel x, channel ch holds 4 f + 2 x + ch; CFHW order: ch, f, x.
  EXPECT_EQ(std::vector<uint8_t>(p, p + 8), (std::vector<uint8_t>{0, 2, 4, 6, 1, 3, 5, 7}));
}

TEST(SequenceOperator, PerFrameArgumentsAndBroadcasts) {
  OpRunner brightness("brightness", {});
  Batch per_frame =
      Batch::allocate(default_host_pool(), DType::kF32, {TensorShape{3}, TensorShape{1}}, "F");
  const float first[] = {0.f, 1.f, 2.f};
  std::copy(first, first + 3, per_frame.data_as<float>(0));
  per_frame.data_as<float>(1)[0] = 0.5f;
  auto out = brightness.run({sequences({3, 2}, 1, 1, 1)}, -1, {{"brightness", per_frame}});
  const uint8_t* a = out[0].data_as<uint8_t>(0);
  EXPECT_EQ(std::vector<uint8_t>(a, a + 3), (std::vector<uint8_t>{0, 1, 4}));
  const uint8_t* b = out[0].data_as<uint8_t>(1);
  EXPECT_EQ(std::vector<uint8_t>(b, b + 2), (std::vector<uint8_t>{25, 26}));  // 50, 51 halved
  Batch wrong =
      Batch::allocate(default_host_pool(), DType::kF32, {TensorShape{2}, TensorShape{2}}, "F");
  try {
    brightness.run({sequences({3, 2}, 1, 1, 1)}, -1, {{"brightness", wrong}});
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("sample 0 of argument 'brightness' (per frame) has 2 "
                                         "values for a sequence of 3 frames"),
              std::string::npos)
        << e.what();
  }
}

TEST(SequenceOperator, ErrorsNameTheSampleAndFrame) {
  OpRunner crop("crop", {{"crop", std::vector<double>{2, 2}}});
  try {
    crop.run({sequences({2, 2}, 1, 2, 1)});
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("sample 0, frame 0: crop: crop window 2x2"),
              std::string::npos)
        << e.what();
  }
}

TEST(SequenceOperator, ImagesPassStraightThrough) {
  OpRunner flip("flip", {{"horizontal", int64_t{1}}});
  auto out = flip.run({testing::image_batch({{1, 2}}, {TensorShape{1, 2, 1}})});
  EXPECT_EQ(out[0].layout().str(), "HWC");
  EXPECT_EQ(out[0].data_as<uint8_t>(0)[0], 2);
}

}  // namespace
}  // namespace stoker::ops
