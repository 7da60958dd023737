#include "stoker/kernels/color/jpeg_distortion.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

namespace jd = jpeg_distortion;

// The textbook orthonormal DCT-II, in double: the factorised one must compute it.
void textbook_dct(const float* in, double* out) {
  for (int k = 0; k < 8; ++k) {
    double sum = 0;
    for (int n = 0; n < 8; ++n) sum += in[n] * std::cos(M_PI * (2 * n + 1) * k / 16.0);
    out[k] = sum * (k == 0 ? std::sqrt(1.0 / 8) : std::sqrt(2.0 / 8));
  }
}

TEST(JpegDistortion, TheDctIsTheOrthonormalDctAndItsInverseUndoesIt) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> any(-128.f, 127.f);
  for (int trial = 0; trial < 200; ++trial) {
    float x[16];  // every other element: a stride of 2
    for (float& v : x) v = any(rng);
    float in[8];
    for (int n = 0; n < 8; ++n) in[n] = x[2 * n];
    double want[8];
    textbook_dct(in, want);
    jd::dct_forward(x, 2);
    for (int k = 0; k < 8; ++k) ASSERT_NEAR(x[2 * k], want[k], 1e-3) << "trial " << trial;
    jd::dct_inverse(x, 2);
    for (int n = 0; n < 8; ++n) ASSERT_NEAR(x[2 * n], in[n], 1e-3) << "trial " << trial;
  }
}

TEST(JpegDistortion, TablesAreTheStandardOnesScaledAsDali) {
  const uint8_t luma50[8] = {16, 11, 10, 16, 24, 40, 51, 61};
  const auto t50 = jpeg_distortion_tables(50);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(t50.luma[k], luma50[k]);
  EXPECT_EQ(t50.chroma[0], 17);
  EXPECT_EQ(t50.chroma[63], 99);
  for (int q : {100, 150}) {  // scale 0: every entry 1 (out of range: clamped)
    const auto t = jpeg_distortion_tables(q);
    for (int k = 0; k < 64; ++k) ASSERT_EQ(t.luma[k] + t.chroma[k], 2) << q;
  }
  for (int q : {1, 0, -7}) {  // scale 50: saturated at 255 (800 for luma's first)
    const auto t = jpeg_distortion_tables(q);
    EXPECT_EQ(t.luma[0], 255) << q;
    EXPECT_EQ(t.chroma[63], 255) << q;
  }
  const auto t75 = jpeg_distortion_tables(75);  // scale 0.5: 11 -> 5.5, half away from zero
  EXPECT_EQ(t75.luma[1], 6);
  EXPECT_EQ(t75.luma[0], 8);
  const auto t95 = jpeg_distortion_tables(95);  // scale 0.1 (in float, 0.100000024): 16 -> 2
  EXPECT_EQ(t95.luma[0], 2);
  EXPECT_EQ(t95.luma[2], 1);
  // Scale 50 / 30 in float: 99 -> 164.99999 -> 165, where libjpeg's integers give 164.
  EXPECT_EQ(jpeg_distortion_tables(30).chroma[63], 165);
  const auto t10 = jpeg_distortion_tables(10);  // scale 5
  EXPECT_EQ(t10.luma[1], 55);
  EXPECT_EQ(t10.chroma[0], 85);
}

std::vector<uint8_t> distort(const std::vector<uint8_t>& img, int64_t h, int64_t w, int q) {
  std::vector<uint8_t> out(img.size(), 7);
  jpeg_distortion_reference(img.data(), out.data(), h, w, jpeg_distortion_tables(q));
  return out;
}

TEST(JpegDistortion, ConstantImagesStayConstant) {
  for (const auto& rgb :
       std::vector<std::vector<int>>{{128, 128, 128}, {200, 30, 90}, {0, 0, 0}, {255, 255, 255}}) {
    const int64_t h = 21, w = 35;
    std::vector<uint8_t> img(size_t(h * w * 3));
    for (size_t i = 0; i < img.size(); ++i) img[i] = uint8_t(rgb[i % 3]);
    const auto out = distort(img, h, w, 30);
    for (size_t i = 0; i < img.size(); ++i) {
      ASSERT_EQ(out[i], out[i % 3]) << "element " << i;  // every pixel alike
      ASSERT_LE(std::abs(int(out[i]) - rgb[i % 3]), 3) << "channel " << i % 3;
    }
    if (rgb[0] == 128 && rgb[1] == 128 && rgb[2] == 128) {
      EXPECT_EQ(out, img);
    }
  }
}

// Blocks past the image's edge read its nearest edge pixel: an image whose sides are not
// multiples of 16 comes out as the top-left of the image padded by repeating its edges.
TEST(JpegDistortion, EdgesAreRepeatedIntoPartialBlocksAndOnlyTheImageIsWritten) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> any(0, 255);
  for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{17, 5}, {1, 1}, {33, 47}, {2, 31}}) {
    std::vector<uint8_t> img(size_t(h * w * 3));
    for (auto& v : img) v = uint8_t(any(rng));
    const int64_t ph = (h + 15) / 16 * 16, pw = (w + 15) / 16 * 16;
    std::vector<uint8_t> padded(size_t(ph * pw * 3));
    for (int64_t y = 0; y < ph; ++y)
      for (int64_t x = 0; x < pw; ++x)
        for (int c = 0; c < 3; ++c)
          padded[size_t((y * pw + x) * 3 + c)] =
              img[size_t((std::min(y, h - 1) * w + std::min(x, w - 1)) * 3 + c)];
    const auto out = distort(img, h, w, 40), pout = distort(padded, ph, pw, 40);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(out[size_t((y * w + x) * 3 + c)], pout[size_t((y * pw + x) * 3 + c)])
              << h << "x" << w << " at " << y << "," << x;
  }
}

TEST(JpegDistortion, HigherQualityStaysCloser) {
  const int64_t h = 48, w = 64;
  std::vector<uint8_t> img(size_t(h * w * 3));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      uint8_t* p = &img[size_t((y * w + x) * 3)];
      p[0] = uint8_t(x * 3), p[1] = uint8_t(y * 4), p[2] = uint8_t((x + y) * 2);
    }
  auto error = [&](int q) {
    const auto out = distort(img, h, w, q);
    double sum = 0;
    for (size_t i = 0; i < img.size(); ++i) sum += std::abs(int(out[i]) - int(img[i]));
    return sum / double(img.size());
  };
  const double e100 = error(100), e50 = error(50), e5 = error(5);
  EXPECT_LT(e100, 2.0);
  EXPECT_LT(e100, e50);
  EXPECT_LT(e50, e5);
}

}  // namespace
}  // namespace stoker::kernels
