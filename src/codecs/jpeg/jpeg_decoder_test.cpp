#include "stoker/codecs/jpeg/jpeg_decoder.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "stoker/core/error.hpp"
#include "stoker/testing/errors.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::codecs {
namespace {

TEST(JpegDecoder, HighQuality444IsCloseToTheSourceInEveryFormat) {
  const int64_t H = 45, W = 67;
  auto src = testing::random_image_u8(H, W, 3, 1);
  auto jpeg = testing::encode_jpeg(src.data(), H, W, 3, {.quality = 100, .subsample_420 = false});
  JpegDecoder dec;
  auto info = dec.read_header(jpeg.data(), jpeg.size());
  EXPECT_EQ(info.height, H);
  EXPECT_EQ(info.width, W);
  EXPECT_EQ(info.components, 3);
  std::vector<uint8_t> rgb(size_t(H * W * 3)), bgr(rgb.size()), gray(size_t(H * W));
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kRGB, rgb.data(), W * 3);
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kBGR, bgr.data(), W * 3);
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kGray, gray.data(), W);
  int max_diff = 0;
  for (int64_t i = 0; i < H * W; ++i) {
    for (int c = 0; c < 3; ++c) {
      max_diff = std::max(max_diff, std::abs(int(rgb[size_t(3 * i + c)]) - src[size_t(3 * i + c)]));
      ASSERT_EQ(bgr[size_t(3 * i + c)], rgb[size_t(3 * i + 2 - c)]);
    }
    double luma = 0.299 * rgb[size_t(3 * i)] + 0.587 * rgb[size_t(3 * i + 1)] +
                  0.114 * rgb[size_t(3 * i + 2)];
    ASSERT_NEAR(gray[size_t(i)], luma, 3.0);
  }
  EXPECT_LE(max_diff, 6);
  EXPECT_GT(max_diff, 0);  // a lossy codec: the test really decoded something
}

TEST(JpegDecoder, ProgressiveEqualsBaselineOfSameQuantisation) {
  const int64_t H = 33, W = 40;
  auto src = testing::random_image_u8(H, W, 3, 2);
  auto base = testing::encode_jpeg(src.data(), H, W, 3, {.quality = 85});
  auto prog = testing::encode_jpeg(src.data(), H, W, 3, {.quality = 85, .progressive = true});
  JpegDecoder dec;
  EXPECT_TRUE(dec.read_header(prog.data(), prog.size()).progressive);
  std::vector<uint8_t> a(size_t(H * W * 3)), b(a.size());
  dec.decode(base.data(), base.size(), ColorFormat::kRGB, a.data(), W * 3);
  dec.decode(prog.data(), prog.size(), ColorFormat::kRGB, b.data(), W * 3);
  EXPECT_EQ(a, b);
}

TEST(JpegDecoder, RowStrideLeavesPaddingUntouched) {
  const int64_t H = 8, W = 9;
  auto src = testing::random_image_u8(H, W, 1, 3);
  auto jpeg = testing::encode_jpeg(src.data(), H, W, 1);
  JpegDecoder dec;
  std::vector<uint8_t> out(size_t(H * (W + 5)), 0xee);
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kGray, out.data(), W + 5);
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = W; x < W + 5; ++x) ASSERT_EQ(out[size_t(y * (W + 5) + x)], 0xee);
}

TEST(JpegDecoder, ErrorsAreClear) {
  JpegDecoder dec;
  std::vector<uint8_t> junk{0x00, 0x01, 0x02, 0x03, 0x04};
  EXPECT_EQ(testing::value_error_of([&] { dec.read_header(junk.data(), junk.size()); }),
            "invalid JPEG: Not a JPEG file: starts with 0x00 0x01");
  EXPECT_EQ(testing::value_error_of([&] { dec.read_header(junk.data(), 0); }),
            "empty JPEG stream (0 bytes)");

  auto src = testing::random_image_u8(64, 64, 3, 4);
  auto jpeg = testing::encode_jpeg(src.data(), 64, 64, 3);
  std::vector<uint8_t> out(64 * 64 * 3);
  auto no_scan = std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + 100);  // cut in the tables
  EXPECT_EQ(testing::value_error_of([&] { dec.read_header(no_scan.data(), no_scan.size()); }),
            "invalid JPEG: Premature end of JPEG file");

  auto huge = jpeg;
  testing::patch_jpeg_size(huge, 64250, 64250);
  EXPECT_EQ(testing::value_error_of([&] { dec.read_header(huge.data(), huge.size()); }),
            "JPEG of 64250x64250 = 4128062500 pixels exceeds the limit of 134217728 pixels "
            "(raise max_pixels to allow it)");
  // The decoder is still usable after errors.
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kRGB, out.data(), 192);
}

// Where the first marker after SOI's first segment starts.
size_t second_segment(const std::vector<uint8_t>& j) {
  EXPECT_EQ(j[2], 0xFF);
  return 4 + (size_t(j[4]) << 8 | j[5]);
}

// Streams libjpeg-turbo decodes with a warning decode as it outputs them (as DALI, PIL and
// torchvision return them), with the warning counted; strict mode raises.
TEST(JpegDecoder, DataWarningsDecodeAnywayUnlessStrict) {
  auto src = testing::random_image_u8(64, 96, 3, 5);
  auto jpeg = testing::encode_jpeg(src.data(), 64, 96, 3);
  JpegDecoder dec;
  std::vector<uint8_t> clean(64 * 96 * 3), out(clean.size(), 7);
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kRGB, clean.data(), 96 * 3);
  EXPECT_EQ(dec.warnings(), 0);
  JpegLimits strict;
  strict.strict = true;

  // Junk bytes between two segments: the pixels are the clean decode's.
  auto junk = jpeg;
  const size_t at = second_segment(junk);
  const uint8_t marker = junk[at + 1];
  junk.insert(junk.begin() + long(at), {0x12, 0x34, 0x56});
  dec.decode(junk.data(), junk.size(), ColorFormat::kRGB, out.data(), 96 * 3);
  EXPECT_EQ(dec.warnings(), 1);
  char expected[80];
  std::snprintf(expected, sizeof expected,
                "Corrupt JPEG data: 3 extraneous bytes before marker 0x%02x", marker);
  EXPECT_EQ(dec.first_warning(), expected);
  EXPECT_EQ(out, clean);
  EXPECT_EQ(testing::value_error_of([&] {
              dec.decode(junk.data(), junk.size(), ColorFormat::kRGB, out.data(), 96 * 3, strict);
            }),
            std::string("invalid JPEG: ") + expected +
                " (strict=True; without it the image decodes as libjpeg-turbo outputs it)");

  // Cut inside the entropy-coded data, the EOI marker after the cut (the "premature end of data
  // segment" of real camera files): the rows before the cut are the clean decode's, the rest
  // is what libjpeg-turbo fills in (grey).
  auto cut = std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + long(jpeg.size() * 2 / 3));
  cut.insert(cut.end(), {0xFF, 0xD9});
  std::fill(out.begin(), out.end(), 7);
  dec.decode(cut.data(), cut.size(), ColorFormat::kRGB, out.data(), 96 * 3);
  EXPECT_EQ(dec.warnings(), 1);
  EXPECT_EQ(dec.first_warning(), "Corrupt JPEG data: premature end of data segment");
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 8 * 96 * 3, clean.begin()));  // 1st MCU row
  EXPECT_EQ(out[out.size() - 1], 128);  // the last rows had no data
  EXPECT_NE(out, clean);
  EXPECT_EQ(testing::value_error_of([&] {
              dec.decode(cut.data(), cut.size(), ColorFormat::kRGB, out.data(), 96 * 3, strict);
            }),
            "corrupt JPEG data: Corrupt JPEG data: premature end of data segment (strict=True; "
            "without it the image decodes as libjpeg-turbo outputs it)");
  // A file cut short (no EOI) is refused in both modes, as DALI, PIL and torchvision refuse it.
  auto truncated = std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + long(jpeg.size() * 2 / 3));
  for (const auto& limits : {JpegLimits{}, strict}) {
    EXPECT_EQ(testing::value_error_of([&] {
                dec.decode(truncated.data(), truncated.size(), ColorFormat::kRGB, out.data(),
                           96 * 3, limits);
              }),
              "corrupt JPEG data: Premature end of JPEG file");
  }
  // A window of a truncated stream decodes too; a clean stream afterwards has no warnings.
  std::vector<uint8_t> window(16 * 16 * 3);
  dec.decode_region(cut.data(), cut.size(), ColorFormat::kRGB, {0, 0, 16, 16}, window.data(),
                    16 * 3);
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kRGB, out.data(), 96 * 3);
  EXPECT_EQ(dec.warnings(), 0);
  EXPECT_EQ(dec.first_warning(), "");
  EXPECT_EQ(out, clean);
}

std::optional<std::string> data_or_skip() { return testing::shared_data_dir(); }

// Reads a binary PPM (P6) file.
std::vector<uint8_t> read_ppm(const std::string& path, int64_t& h, int64_t& w) {
  std::ifstream f(path, std::ios::binary);
  std::string magic;
  int maxval;
  f >> magic >> w >> h >> maxval;
  f.get();
  std::vector<uint8_t> px(size_t(h * w * 3));
  f.read(reinterpret_cast<char*>(px.data()), std::streamsize(px.size()));
  return px;
}

TEST(JpegDecoderSharedData, LibjpegTurboTestImageMatchesItsSource) {
  auto dir = data_or_skip();
  if (!dir) GTEST_SKIP() << "shared data not found (set STOKER_SHARED_DATA)";
  auto jpeg = testing::read_file(*dir + "/jpeg/libjpeg-turbo/testorig.jpg");
  int64_t h, w;
  auto ppm = read_ppm(*dir + "/jpeg/libjpeg-turbo/testorig.ppm", h, w);
  JpegDecoder dec;
  std::vector<uint8_t> out(size_t(h * w * 3));
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kRGB, out.data(), w * 3);
  int max_diff = 0;
  for (size_t i = 0; i < out.size(); ++i) max_diff = std::max(max_diff, std::abs(out[i] - ppm[i]));
  EXPECT_LE(max_diff, 3);  // the manifest's measured agreement for this lossy pair
}

TEST(JpegDecoderSharedData, AdobeCmykConvertsToRgb) {
  auto dir = data_or_skip();
  if (!dir) GTEST_SKIP() << "shared data not found (set STOKER_SHARED_DATA)";
  auto jpeg = testing::read_file(*dir + "/jpeg/jpeg-js/cmyktest.jpg");
  auto cmyk = testing::read_file(*dir + "/jpeg/jpeg-js/cmyktest.cmyk");  // jpeg-js decode
  JpegDecoder dec;
  auto info = dec.read_header(jpeg.data(), jpeg.size());
  ASSERT_EQ(info.components, 4);
  ASSERT_EQ(cmyk.size(), size_t(info.height * info.width * 4));
  std::vector<uint8_t> rgb(size_t(info.height * info.width * 3));
  dec.decode(jpeg.data(), jpeg.size(), ColorFormat::kRGB, rgb.data(), info.width * 3);
  // Despite its name, jpeg-js's .cmyk reference holds its own colour conversion as 4 bytes
  // per pixel: R, G, B, 255 (checked against PIL's CMYK->RGB when this test was written).
  int max_diff = 0;
  for (int64_t i = 0; i < info.height * info.width; ++i)
    for (int c = 0; c < 3; ++c)
      max_diff = std::max(max_diff, std::abs(rgb[size_t(3 * i + c)] - cmyk[size_t(4 * i + c)]));
  EXPECT_LE(max_diff, 4);
}

}  // namespace
}  // namespace stoker::codecs
