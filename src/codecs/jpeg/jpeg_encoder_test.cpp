#include "stoker/codecs/jpeg/jpeg_encoder.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "stoker/testing/errors.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::codecs {
namespace {

TEST(JpegEncoder, WritesWhatLibjpegsDefaultsAtThatQualityWriteForStridedRows) {
  const int64_t h = 23, w = 31;
  const auto rgb = testing::random_image_u8(h, w, 3, 4);
  // The same pixels with 5 bytes of padding after each row.
  std::vector<uint8_t> padded(size_t(h * (w * 3 + 5)));
  for (int64_t y = 0; y < h; ++y)
    std::copy(rgb.begin() + y * w * 3, rgb.begin() + (y + 1) * w * 3,
              padded.begin() + y * (w * 3 + 5));
  JpegEncoder enc;
  std::vector<uint8_t> out;
  for (const int quality : {1, 50, 100}) {
    enc.encode(padded.data(), h, w, 3, w * 3 + 5, quality, out);
    EXPECT_EQ(out, testing::encode_jpeg(rgb.data(), h, w, 3, {.quality = quality})) << quality;
  }
  const auto gray = testing::random_image_u8(h, w, 1, 5);
  enc.encode(gray.data(), h, w, 1, w, 75, out);
  EXPECT_EQ(out, testing::encode_jpeg(gray.data(), h, w, 1, {.quality = 75}));
}

TEST(JpegEncoder, RefusesWhatJpegCannotHoldByName) {
  JpegEncoder enc;
  std::vector<uint8_t> out, pixels(3);
  EXPECT_EQ(testing::value_error_of([&] { enc.encode(pixels.data(), 1, 70000, 3, 3, 50, out); }),
            "JPEG cannot hold an image of 1x70000 pixels (1 to 65500 on each side)");
  EXPECT_EQ(testing::value_error_of([&] { enc.encode(pixels.data(), 1, 1, 4, 4, 50, out); }),
            "JPEG encoding takes 1 or 3 channels, got 4");
  EXPECT_EQ(testing::value_error_of([&] { enc.encode(pixels.data(), 1, 1, 3, 3, 0, out); }),
            "JPEG quality must be 1 to 100, got 0");
  enc.encode(pixels.data(), 1, 1, 3, 3, 50, out);  // and it still works after refusing
  EXPECT_GT(out.size(), 100u);
}

}  // namespace
}  // namespace stoker::codecs
