#include "stoker/kernels/resize/resize_cpu.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "stoker/testing/image_reference.hpp"

namespace stoker::kernels {
namespace {

using testing::RefImage;

struct ResizeCase {
  int64_t in_h, in_w, out_h, out_w;
  bool antialias;
};

void PrintTo(const ResizeCase& c, std::ostream* os) {
  *os << c.in_h << "x" << c.in_w << "->" << c.out_h << "x" << c.out_w
      << (c.antialias ? " antialias" : "");
}

class ResizeLinear : public ::testing::TestWithParam<ResizeCase> {};

// u8 -> u8 within 1 of the rounded double reference; u8 -> f32 within 1e-3.
TEST_P(ResizeLinear, MatchesReference) {
  auto p = GetParam();
  const int64_t C = 3;
  auto src = testing::random_image_u8(p.in_h, p.in_w, C, uint32_t(p.in_h * 31 + p.out_w));
  auto ref = testing::resize_linear_reference(
      testing::to_ref(src.data(), p.in_h, p.in_w, C, p.in_w * C), p.out_h, p.out_w, p.antialias);
  std::vector<float> scratch;
  std::vector<uint8_t> out_u8(size_t(p.out_h * p.out_w * C), 0xcd);
  resize_linear_cpu<uint8_t, uint8_t>(dense_image(out_u8.data(), p.out_h, p.out_w, C),
                                      dense_image<const uint8_t>(src.data(), p.in_h, p.in_w, C),
                                      p.antialias, scratch);
  std::vector<float> out_f(size_t(p.out_h * p.out_w * C), NAN);
  resize_linear_cpu<float, uint8_t>(dense_image(out_f.data(), p.out_h, p.out_w, C),
                                    dense_image<const uint8_t>(src.data(), p.in_h, p.in_w, C),
                                    p.antialias, scratch);
  for (size_t i = 0; i < out_u8.size(); ++i) {
    ASSERT_LE(std::abs(int(out_u8[i]) - int(testing::round_u8(ref.data[i]))), 1) << i;
    ASSERT_NEAR(out_f[i], ref.data[i], 1e-3) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ResizeLinear,
    ::testing::Values(ResizeCase{20, 30, 40, 45, true},    // upscale
                      ResizeCase{37, 53, 11, 17, true},    // downscale, antialiased
                      ResizeCase{37, 53, 11, 17, false},   // downscale, plain bilinear
                      ResizeCase{16, 16, 16, 16, true},    // identity
                      ResizeCase{1, 9, 5, 3, true},        // degenerate height
                      ResizeCase{64, 48, 23, 61, true},    // mixed
                      ResizeCase{300, 420, 5, 6, true}));  // > 64 taps per output pixel

TEST(ResizeLinearWindow, CropWindowIsResizedAlone) {
  // Resizing a window must see only the window's pixels (crop-then-resize semantics).
  const int64_t H = 30, W = 40, C = 3;
  auto src = testing::random_image_u8(H, W, C, 3);
  auto full = dense_image<const uint8_t>(src.data(), H, W, C);
  auto win = full.window(5, 7, 12, 19);
  auto ref = testing::resize_linear_reference(testing::to_ref(win.data, 12, 19, C, win.row_stride),
                                              9, 8, true);
  std::vector<float> scratch;
  std::vector<float> out(9 * 8 * C);
  resize_linear_cpu<float, uint8_t>(dense_image(out.data(), 9, 8, C), win, true, scratch);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref.data[i], 1e-3);
}

TEST(ResampleWeights, RejectsEmptyExtents) {
  try {
    linear_resample_weights(0, 5, true);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "cannot resample 0 to 5 pixels: extents must be positive");
  }
}

}  // namespace
}  // namespace stoker::kernels
