#include "stoker/codecs/tiff/tiff_decoder.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"
#include "stoker/testing/errors.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

#ifdef STOKER_HAVE_TIFF
#include <tiffio.h>
#endif

namespace stoker::codecs {
namespace {

#ifdef STOKER_HAVE_TIFF
// An RGB TIFF of `pixels` (h x w x 3, uint8 or uint16 by `bits`), written by libtiff in strips
// of `rows_per_strip` rows, LZW-compressed.
template <typename T>
std::vector<uint8_t> tiff_of(const std::vector<T>& pixels, int h, int w, int rows_per_strip) {
  // ctest runs the tests of this file at once in separate processes: the name carries the pid.
  const auto path = std::filesystem::temp_directory_path() /
                    ("stoker_tiff_test_" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tif");
  TIFF* tif = TIFFOpen(path.c_str(), "w");
  EXPECT_NE(tif, nullptr);
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, uint32_t(w));
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, uint32_t(h));
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, uint16_t(3));
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, uint16_t(8 * sizeof(T)));
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_LZW);
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, uint32_t(rows_per_strip));
  std::vector<T> row(size_t(w * 3));
  for (int y = 0; y < h; ++y) {
    std::memcpy(row.data(), pixels.data() + size_t(y * w * 3), row.size() * sizeof(T));
    EXPECT_EQ(TIFFWriteScanline(tif, row.data(), uint32_t(y), 0), 1);
  }
  TIFFClose(tif);
  auto bytes = testing::read_file(path.string());
  std::filesystem::remove(path);
  return bytes;
}

TEST(TiffDecoder, StripsDecodeExactlyInEveryFormat) {
  const int h = 23, w = 31;
  const auto src = testing::random_image_u8(h, w, 3, 8);
  const auto tiff = tiff_of(src, h, w, 5);
  const TiffInfo info = read_tiff_header(tiff.data(), tiff.size(), 1 << 20);
  EXPECT_EQ(info.height, h);
  EXPECT_EQ(info.width, w);
  EXPECT_EQ(info.channels, 3);
  EXPECT_EQ(info.bits, 8);
  for (ColorFormat fmt :
       {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray, ColorFormat::kAnyData}) {
    const int oc = tiff_output_channels(fmt, info);
    const int64_t stride = w * oc + 5;  // wider rows than the image: the stride is honoured
    std::vector<uint8_t> got(size_t(stride * h), 0xCD), want(size_t(w * oc));
    decode_tiff(tiff.data(), tiff.size(), info, fmt, got.data(), stride, 1 << 20);
    for (int y = 0; y < h; ++y) {
      convert_row(src.data() + y * w * 3, 3, fmt, want.data(), w);
      ASSERT_EQ(0, std::memcmp(got.data() + y * stride, want.data(), want.size())) << y;
      ASSERT_EQ(got[size_t(y * stride + w * oc)], 0xCD) << "wrote past row " << y;
    }
  }
}

TEST(TiffDecoder, SixteenBitKeepsItsPrecisionOrRoundsToEight) {
  const int h = 4, w = 6;
  std::vector<uint16_t> src(size_t(h * w * 3));
  for (size_t k = 0; k < src.size(); ++k) src[k] = uint16_t(k * 2741 + 1000);
  const auto tiff = tiff_of(src, h, w, 2);
  const TiffInfo info = read_tiff_header(tiff.data(), tiff.size(), 1 << 20);
  EXPECT_EQ(info.bits, 16);
  std::vector<uint16_t> wide(src.size());
  decode_tiff(tiff.data(), tiff.size(), info, ColorFormat::kRGB, wide.data(), w * 3, 1 << 20,
              /*keep_16=*/true);
  EXPECT_EQ(wide, src);
  std::vector<uint8_t> narrow(src.size());
  decode_tiff(tiff.data(), tiff.size(), info, ColorFormat::kRGB, narrow.data(), w * 3, 1 << 20);
  for (size_t k = 0; k < src.size(); ++k)  // round(v * 255 / 65535), as DALI
    ASSERT_EQ(narrow[k], (src[k] * 255 + 32767) / 65535) << k;
}

TEST(TiffDecoder, RefusesLargeImagesBeforeAllocatingAndBadData) {
  const auto src = testing::random_image_u8(40, 50, 3, 9);
  const auto tiff = tiff_of(src, 40, 50, 8);
  EXPECT_EQ(testing::value_error_of([&] { read_tiff_header(tiff.data(), tiff.size(), 1999); }),
            "TIFF of 50x40 pixels exceeds max_pixels (1999)");
  EXPECT_EQ(testing::value_error_of([&] {
              read_tiff_header(tiff.data(), 7, 1 << 20);
            }).rfind("invalid TIFF header: ", 0),
            0u);
  const TiffInfo info = read_tiff_header(tiff.data(), tiff.size(), 1 << 20);
  std::vector<uint8_t> out(size_t(40 * 50 * 3));
  // The strips' data cut short (the directory, written last by libtiff, kept whole).
  auto cut = tiff;
  std::memset(cut.data() + 8, 0, cut.size() / 2);
  const std::string msg = testing::value_error_of([&] {
    decode_tiff(cut.data(), cut.size(), info, ColorFormat::kRGB, out.data(), 150, 1 << 20);
  });
  EXPECT_EQ(msg.rfind("invalid TIFF data: ", 0), 0u) << msg;
}

#else

TEST(TiffDecoder, RefusedWithoutLibtiff) {
  EXPECT_FALSE(tiff_available());
  const uint8_t ii[] = {'I', 'I', 42, 0, 8, 0, 0, 0};
  EXPECT_THROW(read_tiff_header(ii, sizeof ii, 1 << 20), ValueError);
}

#endif

}  // namespace
}  // namespace stoker::codecs
