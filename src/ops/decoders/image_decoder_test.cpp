#include <gtest/gtest.h>

#include "stoker/codecs/jpeg/jpeg_decoder.hpp"
#include "stoker/codecs/jpeg2000/jpeg2000_decoder.hpp"
#include "stoker/codecs/tiff/tiff_decoder.hpp"
#include "stoker/codecs/webp/webp_decoder.hpp"
#include "stoker/ops/op_test_util.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

std::vector<uint8_t> jpeg_of(int64_t h, int64_t w, uint32_t seed) {
  auto px = stoker::testing::random_image_u8(h, w, 3, seed);
  return stoker::testing::encode_jpeg(px.data(), h, w, 3);
}

TEST(ImageDecoderOp, RaggedBatchMatchesTheCodecAndIsContiguous) {
  std::vector<std::vector<uint8_t>> files{jpeg_of(20, 30, 1), jpeg_of(41, 17, 2), jpeg_of(8, 8, 3)};
  for (std::string type : {"RGB", "GRAY"}) {
    OpRunner r("decoders.image", {{"output_type", type}}, 3);
    auto out = r.run({testing::bytes_batch(files, {"a.jpg", "b.jpg", "c.jpg"})});
    ASSERT_EQ(out.size(), 1u);
    const Batch& b = out[0];
    EXPECT_TRUE(b.is_contiguous());
    EXPECT_EQ(b.layout().str(), "HWC");
    EXPECT_EQ(b.source_info(1), "b.jpg");
    codecs::JpegDecoder dec;
    for (int i = 0; i < 3; ++i) {
      auto info = dec.read_header(files[size_t(i)].data(), files[size_t(i)].size());
      int64_t c = type == "RGB" ? 3 : 1;
      ASSERT_EQ(b.shape(i), (TensorShape{info.height, info.width, c}));
      std::vector<uint8_t> expect(size_t(info.height * info.width * c));
      dec.decode(files[size_t(i)].data(), files[size_t(i)].size(),
                 type == "RGB" ? codecs::ColorFormat::kRGB : codecs::ColorFormat::kGray,
                 expect.data(), info.width * c);
      ASSERT_EQ(0, std::memcmp(expect.data(), b.data(i), expect.size()));
    }
  }
}

std::string error_of(OpRunner& r, Batch in) {
  try {
    r.run({std::move(in)});
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ImageDecoderOp, WarnedJpegsDecodeAnywayUnlessStrict) {
  auto good = jpeg_of(64, 64, 4);
  // Cut inside the scan, EOI after the cut: libjpeg-turbo warns and fills the rest.
  auto cut = std::vector<uint8_t>(good.begin(), good.begin() + long(good.size() / 2));
  cut.insert(cut.end(), {0xFF, 0xD9});
  auto batch = testing::bytes_batch({good, cut}, {"ok.jpg", "/data/cut.jpg"});
  OpRunner lenient("decoders.image", {});
  auto out = lenient.run({batch});
  EXPECT_EQ(out[0].shape(1), (TensorShape{64, 64, 3}));
  EXPECT_EQ(lenient.op().stats().at("decoded_with_warnings"), 1.0);
  OpRunner strict("decoders.image", {{"strict", true}});
  EXPECT_EQ(error_of(strict, batch),
            "sample 1 (source '/data/cut.jpg'): corrupt JPEG data: Corrupt JPEG data: premature "
            "end of data segment (strict=True; without it the image decodes as libjpeg-turbo "
            "outputs it)");
  EXPECT_EQ(strict.op().stats().at("decoded_with_warnings"), 0.0);
}

TEST(ImageDecoderOp, BadSamplesNameSampleAndSource) {
  OpRunner r("decoders.image", {});
  auto good = jpeg_of(64, 64, 4);
  auto truncated = std::vector<uint8_t>(good.begin(), good.begin() + long(good.size() / 2));
  EXPECT_EQ(error_of(r, testing::bytes_batch({good, truncated}, {"ok.jpg", "/data/cut.jpg"})),
            "sample 1 (source '/data/cut.jpg'): corrupt JPEG data: Premature end of JPEG file");
  auto headless = std::vector<uint8_t>(good.begin(), good.begin() + 100);  // no frame header
  EXPECT_EQ(error_of(r, testing::bytes_batch({headless}, {"/data/head.jpg"})),
            "sample 0 (source '/data/head.jpg'): invalid JPEG: Premature end of JPEG file");
  std::vector<uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0};
  EXPECT_EQ(error_of(r, testing::bytes_batch({png}, {"x.png"})),
            "sample 0 (source 'x.png'): invalid PNG header: truncated PNG data");
  std::vector<uint8_t> gif{'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  EXPECT_EQ(error_of(r, testing::bytes_batch({gif}, {"x.gif"})),
            std::string("sample 0 (source 'x.gif'): GIF images are not supported (supported: "
                        "JPEG, PNG, BMP, PNM") +
                (codecs::webp_available() ? ", WebP" : "") +
                (codecs::tiff_available() ? ", TIFF" : "") +
                (codecs::jpeg2000_available() ? ", JPEG 2000)" : ")"));
  std::vector<uint8_t> webp{'R', 'I', 'F', 'F', 12,  0,   0,   0,
                            'W', 'E', 'B', 'P', 'V', 'P', '8', ' '};
  EXPECT_EQ(error_of(r, testing::bytes_batch({webp}, {"x.webp"})),
            codecs::webp_available()
                ? "sample 0 (source 'x.webp'): invalid WebP header: truncated data"
                : "sample 0 (source 'x.webp'): WebP images are not supported: stoker was built "
                  "without libwebp");
  EXPECT_EQ(error_of(r, testing::bytes_batch({{1, 2, 3}}, {"x.bin"})),
            "sample 0 (source 'x.bin'): not a recognised image format (first bytes: 01 02 03)");
  EXPECT_EQ(error_of(r, testing::bytes_batch({{}}, {"empty.jpg"})),
            "sample 0 (source 'empty.jpg'): empty input (0 bytes), not an image");
}

TEST(ImageDecoderOp, MaxPixelsRefusesBeforeAllocating) {
  OpRunner r("decoders.image", {{"max_pixels", int64_t{100}}});
  EXPECT_EQ(error_of(r, testing::bytes_batch({jpeg_of(20, 30, 5)}, {"big.jpg"})),
            "sample 0 (source 'big.jpg'): JPEG of 30x20 = 600 pixels exceeds the limit of 100 "
            "pixels (raise max_pixels to allow it)");
  EXPECT_EQ(r.pool().stats().allocations, 0u);
}

}  // namespace
}  // namespace stoker::ops
