#include <gtest/gtest.h>

#include <cstring>

#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/op_test_util.hpp"
#include "stoker/testing/image_reference.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;
namespace ref = stoker::testing;

TEST(ResizeOutputSize, DaliRules) {
  struct Case {
    int64_t h, w;
    ResizeRequest r;
    int64_t eh, ew;
  };
  std::vector<Case> cases{
      {375, 500, {.shorter = 256}, 256, 341},  // 341.33 -> 341
      {500, 375, {.shorter = 256}, 341, 256},
      {375, 500, {.longer = 100}, 75, 100},
      {375, 500, {.resize_y = 150}, 150, 200},
      {375, 500, {.resize_x = 250}, 188, 250},  // 187.5 rounds half up
      {375, 500, {.resize_y = 100, .resize_x = 100}, 100, 100},
      {375, 500, {.resize_y = 100, .resize_x = 100, .mode = "not_larger"}, 75, 100},
      {375, 500, {.resize_y = 100, .resize_x = 100, .mode = "not_smaller"}, 100, 133},
      {100, 1000, {.shorter = 50, .max_h = 300, .max_w = 300}, 30, 300},
      {10, 10, {}, 10, 10},
  };
  for (auto& c : cases) {
    auto [h, w] = resize_output_size(c.h, c.w, c.r);
    EXPECT_EQ(h, c.eh) << c.h << "x" << c.w;
    EXPECT_EQ(w, c.ew) << c.h << "x" << c.w;
  }
}

TEST(ResizeOp, MatchesReferencePerSampleSize) {
  auto a = ref::random_image_u8(30, 40, 3, 1), b = ref::random_image_u8(17, 9, 3, 2);
  // Without subpixel_scale the source maps onto the rounded output, as the reference does.
  OpRunner r("resize", {{"resize_shorter", 12.0}, {"subpixel_scale", false}});
  auto out = r.run({testing::image_batch({a, b}, {{30, 40, 3}, {17, 9, 3}})});
  ASSERT_EQ(out[0].shape(0), (TensorShape{12, 16, 3}));
  ASSERT_EQ(out[0].shape(1), (TensorShape{23, 12, 3}));
  auto ea = ref::resize_linear_reference(ref::to_ref(a.data(), 30, 40, 3, 120), 12, 16, true);
  auto eb = ref::resize_linear_reference(ref::to_ref(b.data(), 17, 9, 3, 27), 23, 12, true);
  for (size_t k = 0; k < ea.data.size(); ++k)
    ASSERT_NEAR(out[0].data_as<uint8_t>(0)[k], ref::round_u8(ea.data[k]), 1);
  for (size_t k = 0; k < eb.data.size(); ++k)
    ASSERT_NEAR(out[0].data_as<uint8_t>(1)[k], ref::round_u8(eb.data[k]), 1);
}

TEST(ResizeOp, SubpixelScaleKeepsTheScaleAboutTheCentre) {
  // 17x9 with resize_shorter 12: 22.67 x 12 exactly, 23 x 12 rounded. subpixel_scale (the
  // default, as DALI) keeps the scale 12/9: the 23 rows sample 23 * 9/12 = 17.25 source rows
  // about the centre 8.5, i.e. the region [-0.125, 17.125).
  auto b = ref::random_image_u8(17, 9, 3, 2);
  auto batch = testing::image_batch({b}, {{17, 9, 3}});
  OpRunner subpixel("resize", {{"resize_shorter", 12.0}});
  const double half = 17.0 / 2 * 23.0 / (17.0 * 12.0 / 9.0);
  OpRunner explicit_roi("resize", {{"size", std::vector<double>{23, 12}},
                                   {"roi_start", std::vector<double>{8.5 - half, 0}},
                                   {"roi_end", std::vector<double>{8.5 + half, 9}},
                                   {"subpixel_scale", false}});
  auto x = subpixel.run({batch}), y = explicit_roi.run({batch});
  ASSERT_EQ(x[0].shape(0), (TensorShape{23, 12, 3}));
  ASSERT_EQ(y[0].shape(0), x[0].shape(0));
  EXPECT_EQ(0, std::memcmp(x[0].data(0), y[0].data(0), 23 * 12 * 3));
  OpRunner plain("resize", {{"resize_shorter", 12.0}, {"subpixel_scale", false}});
  EXPECT_NE(0, std::memcmp(x[0].data(0), plain.run({batch})[0].data(0), 23 * 12 * 3));
}

TEST(ResizeOp, PerSampleArgumentTensor) {
  auto a = ref::random_image_u8(10, 10, 3, 1);
  OpRunner r("resize", {});
  auto out = r.run({testing::image_batch({a, a}, {{10, 10, 3}, {10, 10, 3}})}, 2,
                   {{"resize_x", testing::scalar_batch<float>({5.f, 20.f})}});
  EXPECT_EQ(out[0].shape(0), (TensorShape{5, 5, 3}));
  EXPECT_EQ(out[0].shape(1), (TensorShape{20, 20, 3}));
}

TEST(RandomResizedCropOp, ResizesTheDrawnWindowAndIsDeterministic) {
  const int64_t H = 48, W = 64;
  auto img = ref::random_image_u8(H, W, 3, 7);
  std::map<std::string, ops::ArgValue> args{{"size", std::vector<int64_t>{16, 20}}};
  OpRunner r1("random_resized_crop", args, 1, 99, 5), r2("random_resized_crop", args, 3, 99, 5);
  auto in = [&] {
    return testing::image_batch({img, img, img}, {{H, W, 3}, {H, W, 3}, {H, W, 3}});
  };
  auto o1 = r1.run({in()}), o2 = r2.run({in()});
  ASSERT_EQ(o1[0].total_bytes(), o2[0].total_bytes());
  EXPECT_EQ(0, std::memcmp(o1[0].data(0), o2[0].data(0), o1[0].total_bytes()));
  EXPECT_NE(0, std::memcmp(o1[0].data(0), o1[0].data(1), 16 * 20 * 3));  // samples differ
  for (int i = 0; i < 3; ++i) {
    auto rng = random_stream(99, 5, uint64_t(i));
    auto w = random_resized_crop_window(H, W, 0.08, 1.0, 3.0 / 4, 4.0 / 3, 10, rng);
    auto full = ref::to_ref(img.data(), H, W, 3, W * 3);
    ref::RefImage win{w.height, w.width, 3, {}};
    for (int64_t y = 0; y < w.height; ++y)
      for (int64_t x = 0; x < w.width; ++x)
        for (int c = 0; c < 3; ++c) win.data.push_back(full.at(w.y + y, w.x + x, c));
    auto expect = ref::resize_linear_reference(win, 16, 20, true);
    for (size_t k = 0; k < expect.data.size(); ++k)
      ASSERT_NEAR(o1[0].data_as<uint8_t>(i)[k], ref::round_u8(expect.data[k]), 1);
  }
}

TEST(RandomCropWindow, StaysInsideAndFallsBackToCentre) {
  for (uint64_t s = 0; s < 500; ++s) {
    auto rng = random_stream(1, 2, s);
    auto w = random_resized_crop_window(37, 91, 0.08, 1.0, 0.75, 4.0 / 3, 10, rng);
    ASSERT_GE(w.y, 0);
    ASSERT_GE(w.x, 0);
    ASSERT_LE(w.y + w.height, 37);
    ASSERT_LE(w.x + w.width, 91);
    ASSERT_GT(w.height * w.width, 0);
  }
  auto rng = random_stream(1, 2, 3);
  // An area of at least 2x the image can never fit: the centred fallback, aspect-clamped.
  auto w = random_resized_crop_window(100, 400, 2.0, 3.0, 0.75, 4.0 / 3, 10, rng);
  EXPECT_EQ(w.height, 100);
  EXPECT_EQ(w.width, 133);
  EXPECT_EQ(w.x, (400 - 133) / 2);
}

TEST(CropOp, PoliciesAndPositions) {
  auto img = ref::random_image_u8(10, 12, 3, 3);
  auto batch = [&] { return testing::image_batch({img}, {{10, 12, 3}}); };
  OpRunner corner("crop",
                  {{"crop", std::vector<double>{4, 5}}, {"crop_pos_x", 1.0}, {"crop_pos_y", 0.0}});
  auto o = corner.run({batch()});
  ASSERT_EQ(o[0].shape(0), (TensorShape{4, 5, 3}));
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(o[0].data_as<uint8_t>(0)[(y * 5 + x) * 3 + c],
                  img[size_t((y * 12 + 7 + x) * 3 + c)]);

  OpRunner err("crop", {{"crop", std::vector<double>{12, 5}}});
  try {
    err.run({batch()});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "sample 0: crop: crop window 12x5 at (y=-1, x=4) exceeds the 10x12 "
                 "image (out_of_bounds_policy='error'; use 'pad' or 'trim_to_shape')");
  }
  OpRunner pad("crop", {{"crop", std::vector<double>{12, 5}},
                        {"out_of_bounds_policy", std::string("pad")},
                        {"fill_values", std::vector<double>{9}}});
  o = pad.run({batch()});
  ASSERT_EQ(o[0].shape(0), (TensorShape{12, 5, 3}));
  EXPECT_EQ(o[0].data_as<uint8_t>(0)[0], 9);  // row -1 is padding
  EXPECT_EQ(o[0].data_as<uint8_t>(0)[15], img[size_t((0 * 12 + 4) * 3)]);
  OpRunner trim("crop", {{"crop", std::vector<double>{12, 5}},
                         {"out_of_bounds_policy", std::string("trim_to_shape")}});
  o = trim.run({batch()});
  EXPECT_EQ(o[0].shape(0), (TensorShape{10, 5, 3}));
}

TEST(FlipOp, PerSampleFlagsAndChw) {
  auto img = ref::random_image_u8(4, 5, 3, 4);
  OpRunner r("flip", {{"vertical", int64_t{1}}});
  auto o = r.run({testing::image_batch({img, img}, {{4, 5, 3}, {4, 5, 3}})}, 2,
                 {{"horizontal", testing::scalar_batch<int32_t>({0, 1})}});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c) {
        uint8_t v_only = img[size_t(((3 - y) * 5 + x) * 3 + c)];
        uint8_t both = img[size_t(((3 - y) * 5 + (4 - x)) * 3 + c)];
        ASSERT_EQ(o[0].data_as<uint8_t>(0)[(y * 5 + x) * 3 + c], v_only);
        ASSERT_EQ(o[0].data_as<uint8_t>(1)[(y * 5 + x) * 3 + c], both);
      }
  auto chw = testing::image_batch({img}, {{3, 4, 5}});
  chw.set_layout("CHW");
  OpRunner h("flip", {});
  o = h.run({std::move(chw)});
  EXPECT_EQ(o[0].layout().str(), "CHW");
  EXPECT_EQ(o[0].data_as<uint8_t>(0)[0], img[4]);        // plane 0, row 0, last column
  EXPECT_EQ(o[0].data_as<uint8_t>(0)[20], img[20 + 4]);  // plane 1
}

// The graph fuses a gpu flip into the bilinear warp it feeds (OpSpec::fused_middle): the warp's
// map is mirrored instead (Warp::plan, shared by both backends). On the CPU backend, set by
// hand: the same pixels as the flip followed by the warp, for each pair of axes, per-sample and
// constant flags, odd and even sizes, clamped and filled borders.
TEST(WarpOp, AFusedFlipGivesTheFlipThenWarpPixels) {
  const std::vector<TensorShape> shapes{{9, 14, 3}, {16, 7, 3}, {11, 11, 3}, {6, 10, 3}};
  std::vector<std::vector<uint8_t>> pixels;
  for (size_t i = 0; i < shapes.size(); ++i)
    pixels.push_back(ref::random_image_u8(shapes[i][0], shapes[i][1], 3, uint32_t(20 + i)));
  auto images = [&] { return testing::image_batch(pixels, shapes); };
  const std::vector<std::pair<std::string, std::map<std::string, ArgValue>>> warps{
      {"rotate", {{"angle", 17.5}}},
      {"rotate", {{"angle", -40.0}, {"keep_size", true}, {"fill_value", std::vector<double>{3}}}},
      {"warp_affine",
       {{"matrix", std::vector<double>{0.5, 0.1, 1.0, 0.0, 2.0, -1.5}},
        {"size", std::vector<int64_t>{9, 11}}}}};
  const auto horizontal = testing::scalar_batch<int32_t>({1, 0, 1, 0});
  const auto vertical = testing::scalar_batch<int32_t>({0, 1, 1, 0});
  for (const auto& [op, args] : warps) {
    OpRunner flip("flip", {}), warp(op, args);
    auto flipped = flip.run({images()}, -1, {{"horizontal", horizontal}, {"vertical", vertical}});
    auto expected = warp.run({std::move(flipped[0])});
    OpSpec fused = OpRunner::spec(op, args);
    fused.fused_middle.push_back(std::make_shared<OpSpec>(OpRunner::spec("flip", {})));
    OpRunner both(std::move(fused));
    auto got = both.run({images()}, -1, {}, {{{"horizontal", horizontal}, {"vertical", vertical}}});
    // A constant flip (the flip's own vertical=1, horizontal default 1) too.
    OpRunner flip_const("flip", {{"vertical", int64_t{1}}});
    auto expected_const = warp.run({flip_const.run({images()})[0]});
    OpSpec fused_const = OpRunner::spec(op, args);
    fused_const.fused_middle.push_back(
        std::make_shared<OpSpec>(OpRunner::spec("flip", {{"vertical", int64_t{1}}})));
    auto got_const = OpRunner(std::move(fused_const)).run({images()});
    for (auto [e, g] : {std::pair{&expected[0], &got[0]}, {&expected_const[0], &got_const[0]}}) {
      for (int i = 0; i < e->size(); ++i) {
        ASSERT_EQ(e->shape(i), g->shape(i)) << op << " sample " << i;
        const auto* a = e->data_as<uint8_t>(i);
        const auto* b = g->data_as<uint8_t>(i);
        int64_t off = 0;  // bilinear in double: a tie may round one level apart
        for (int64_t k = 0; k < e->shape(i).volume(); ++k) {
          ASSERT_NEAR(a[k], b[k], 1) << op << " sample " << i << " element " << k;
          off += a[k] != b[k];
        }
        EXPECT_LE(off, e->shape(i).volume() / 100) << op << " sample " << i;
      }
    }
  }
}

}  // namespace
}  // namespace stoker::ops
