#include "stoker/codecs/webp/webp_decoder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"
#include "stoker/testing/errors.hpp"
#include "stoker/testing/image_reference.hpp"

#ifdef STOKER_HAVE_WEBP
#include <webp/encode.h>
#endif

namespace stoker::codecs {
namespace {

#ifdef STOKER_HAVE_WEBP
// A lossless WebP of `pixels` (h x w, 3 or 4 channels).
std::vector<uint8_t> lossless(const std::vector<uint8_t>& pixels, int h, int w, int c) {
  uint8_t* out = nullptr;
  const size_t n = c == 4 ? WebPEncodeLosslessRGBA(pixels.data(), w, h, w * 4, &out)
                          : WebPEncodeLosslessRGB(pixels.data(), w, h, w * 3, &out);
  std::vector<uint8_t> bytes(out, out + n);
  WebPFree(out);
  return bytes;
}

TEST(WebpDecoder, LosslessDecodesExactlyInEveryFormat) {
  const int h = 13, w = 29;
  for (int c : {3, 4}) {
    SCOPED_TRACE(c == 4 ? "RGBA" : "RGB");
    const auto src = testing::random_image_u8(h, w, c, 5);
    const auto webp = lossless(src, h, w, c);
    const WebpInfo info = read_webp_header(webp.data(), webp.size(), 1 << 20);
    EXPECT_EQ(info.height, h);
    EXPECT_EQ(info.width, w);
    EXPECT_EQ(info.alpha, c == 4);
    EXPECT_TRUE(info.lossless);
    for (ColorFormat fmt :
         {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray, ColorFormat::kAnyData}) {
      const int oc = webp_output_channels(fmt, info);
      EXPECT_EQ(oc, fmt == ColorFormat::kAnyData ? c : color_channels(fmt));
      // Rows 7 bytes wider than the image: the stride is honoured.
      const int64_t stride = w * oc + 7;
      std::vector<uint8_t> got(size_t(stride * h), 0xAB);
      decode_webp(webp.data(), webp.size(), info, fmt, got.data(), stride);
      std::vector<uint8_t> want(size_t(w * oc));
      for (int y = 0; y < h; ++y) {
        convert_row(src.data() + y * w * c, c, fmt, want.data(), w);
        ASSERT_EQ(0, std::memcmp(got.data() + y * stride, want.data(), want.size())) << y;
        ASSERT_EQ(got[size_t(y * stride + w * oc)], 0xAB) << "wrote past row " << y;
      }
    }
  }
}

TEST(WebpDecoder, RefusesLargeImagesBeforeAllocatingAndBadData) {
  const auto src = testing::random_image_u8(100, 120, 3, 6);
  const auto webp = lossless(src, 100, 120, 3);
  EXPECT_EQ(testing::value_error_of([&] { read_webp_header(webp.data(), webp.size(), 11999); }),
            "WebP of 120x100 pixels exceeds max_pixels (11999)");
  EXPECT_EQ(testing::value_error_of([&] { read_webp_header(webp.data(), 10, 1 << 20); }),
            "invalid WebP header: truncated data");
  const WebpInfo info = read_webp_header(webp.data(), webp.size(), 1 << 20);
  std::vector<uint8_t> out(size_t(100 * 120 * 3));
  EXPECT_EQ(testing::value_error_of([&] {
              decode_webp(webp.data(), webp.size() / 2, info, ColorFormat::kRGB, out.data(), 360);
            }),
            "invalid WebP data: truncated data");
  auto corrupt = webp;
  for (size_t i = 30; i < corrupt.size(); i += 3) corrupt[i] ^= 0x5A;
  const std::string msg = testing::value_error_of([&] {
    decode_webp(corrupt.data(), corrupt.size(), info, ColorFormat::kRGB, out.data(), 360);
  });
  EXPECT_EQ(msg.rfind("invalid WebP data: ", 0), 0u) << msg;
}

#else

TEST(WebpDecoder, RefusedWithoutLibwebp) {
  EXPECT_FALSE(webp_available());
  const uint8_t riff[] = {'R', 'I', 'F', 'F', 4, 0, 0, 0, 'W', 'E', 'B', 'P'};
  EXPECT_THROW(read_webp_header(riff, sizeof riff, 1 << 20), ValueError);
}

#endif

}  // namespace
}  // namespace stoker::codecs
