#include "stoker/codecs/jpeg2000/jpeg2000_decoder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"
#include "stoker/testing/errors.hpp"
#include "stoker/testing/image_reference.hpp"

#ifdef STOKER_HAVE_JPEG2000
#include <openjpeg.h>
#endif

namespace stoker::codecs {
namespace {

using testing::value_error_of;

#ifdef STOKER_HAVE_JPEG2000
// What an encoder writes, grown as OpenJPEG writes and seeks.
struct Sink {
  std::vector<uint8_t> bytes;
  size_t at = 0;
};
OPJ_SIZE_T sink_write(void* buf, OPJ_SIZE_T n, void* user) {
  auto& s = *static_cast<Sink*>(user);
  if (s.bytes.size() < s.at + n) s.bytes.resize(s.at + n);
  std::memcpy(s.bytes.data() + s.at, buf, n);
  s.at += n;
  return n;
}
OPJ_OFF_T sink_skip(OPJ_OFF_T n, void* user) {
  auto& s = *static_cast<Sink*>(user);
  s.at += size_t(n);
  if (s.bytes.size() < s.at) s.bytes.resize(s.at);
  return n;
}
OPJ_BOOL sink_seek(OPJ_OFF_T to, void* user) {
  static_cast<Sink*>(user)->at = size_t(to);
  return OPJ_TRUE;
}

struct Component {
  std::vector<int> samples;  // h / dy x w / dx (rounded up), row-major
  int dx = 1, dy = 1;
};

// A lossless J2K codestream (or JP2 file) of `comps` at precision `prec`, in the given colour
// space, tiled by `tile` pixels when not 0, written by OpenJPEG itself.
std::vector<uint8_t> encode(const std::vector<Component>& comps, int h, int w, int prec,
                            OPJ_COLOR_SPACE space, bool jp2 = false, int tile = 0,
                            bool sgnd = false) {
  std::vector<opj_image_cmptparm_t> params(comps.size());
  for (size_t k = 0; k < comps.size(); ++k) {
    auto& p = params[k];
    std::memset(&p, 0, sizeof(p));
    p.dx = OPJ_UINT32(comps[k].dx), p.dy = OPJ_UINT32(comps[k].dy);
    p.w = OPJ_UINT32((w + comps[k].dx - 1) / comps[k].dx);
    p.h = OPJ_UINT32((h + comps[k].dy - 1) / comps[k].dy);
    p.prec = OPJ_UINT32(prec), p.sgnd = sgnd;
  }
  opj_image_t* image = opj_image_create(OPJ_UINT32(comps.size()), params.data(), space);
  image->x1 = OPJ_UINT32(w), image->y1 = OPJ_UINT32(h);
  for (size_t k = 0; k < comps.size(); ++k)
    std::copy(comps[k].samples.begin(), comps[k].samples.end(), image->comps[k].data);
  opj_cparameters_t cp;
  opj_set_default_encoder_parameters(&cp);
  cp.numresolution = 2;  // small images: few resolution levels
  cp.tcp_mct = comps.size() >= 3 && space == OPJ_CLRSPC_SRGB ? 1 : 0;
  if (tile) cp.tile_size_on = OPJ_TRUE, cp.cp_tdx = tile, cp.cp_tdy = tile;
  opj_codec_t* codec = opj_create_compress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  EXPECT_TRUE(opj_setup_encoder(codec, &cp, image));
  Sink sink;
  opj_stream_t* stream = opj_stream_create(1 << 16, OPJ_FALSE);
  opj_stream_set_write_function(stream, sink_write);
  opj_stream_set_skip_function(stream, sink_skip);
  opj_stream_set_seek_function(stream, sink_seek);
  opj_stream_set_user_data(stream, &sink, nullptr);
  EXPECT_TRUE(opj_start_compress(codec, image, stream));
  EXPECT_TRUE(opj_encode(codec, stream));
  EXPECT_TRUE(opj_end_compress(codec, stream));
  opj_stream_destroy(stream);
  opj_destroy_codec(codec);
  opj_image_destroy(image);
  return sink.bytes;
}

std::vector<Component> planes_of(const std::vector<uint8_t>& hwc, int h, int w, int c) {
  std::vector<Component> out(static_cast<size_t>(c));
  for (int k = 0; k < c; ++k)
    for (int i = 0; i < h * w; ++i) out[size_t(k)].samples.push_back(hwc[size_t(i * c + k)]);
  return out;
}

TEST(Jpeg2000Decoder, LosslessRgbTiledOrNotJp2OrJ2kIsExactInEveryColorFormat) {
  const int h = 37, w = 53;
  const auto rgb = testing::random_image_u8(h, w, 3, 7);
  for (const bool jp2 : {false, true})
    for (const int tile : {0, 16}) {
      SCOPED_TRACE(std::string(jp2 ? "JP2" : "J2K") + (tile ? " tiled" : ""));
      const auto file = encode(planes_of(rgb, h, w, 3), h, w, 8, OPJ_CLRSPC_SRGB, jp2, tile);
      const auto info = read_jpeg2000_header(file.data(), file.size(), 1 << 20);
      EXPECT_EQ(info.height, h);
      EXPECT_EQ(info.width, w);
      EXPECT_EQ(info.channels, 3);
      EXPECT_EQ(info.bits, 8);
      for (const auto fmt : {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray}) {
        const int c = jpeg2000_output_channels(fmt, info);
        std::vector<uint8_t> got(size_t(h * w * c)), want(got.size());
        decode_jpeg2000(file.data(), file.size(), info, fmt, got.data(), w * c, 1 << 20);
        for (int y = 0; y < h; ++y)
          convert_row(rgb.data() + y * w * 3, 3, fmt, want.data() + y * w * c, w);
        EXPECT_EQ(got, want);
      }
    }
}

TEST(Jpeg2000Decoder, AWindowIsTheWindowOfTheWholeImage) {
  const int h = 64, w = 80;
  const auto rgb = testing::random_image_u8(h, w, 3, 3);
  const auto file = encode(planes_of(rgb, h, w, 3), h, w, 8, OPJ_CLRSPC_SRGB, true, 32);
  const auto info = read_jpeg2000_header(file.data(), file.size(), 1 << 20);
  const PixelWindow win{13, 29, 40, 37};
  std::vector<uint8_t> got(size_t(win.h * win.w * 3));
  decode_jpeg2000(file.data(), file.size(), info, ColorFormat::kRGB, got.data(), win.w * 3, 1 << 20,
                  false, &win);
  for (int64_t y = 0; y < win.h; ++y)
    ASSERT_EQ(0, std::memcmp(got.data() + y * win.w * 3, rgb.data() + ((win.y + y) * w + win.x) * 3,
                             size_t(win.w * 3)))
        << "row " << y;
}

TEST(Jpeg2000Decoder, TwelveBitSamplesStayAsStoredIn16BitsAndRoundTo8) {
  const int h = 9, w = 11;
  Component g;
  for (int i = 0; i < h * w; ++i) g.samples.push_back((i * 397) % 4096);
  const auto file = encode({g}, h, w, 12, OPJ_CLRSPC_GRAY);
  const auto info = read_jpeg2000_header(file.data(), file.size(), 1 << 20);
  EXPECT_EQ(info.bits, 16);
  EXPECT_EQ(info.channels, 1);
  std::vector<uint16_t> wide(size_t(h * w));
  decode_jpeg2000(file.data(), file.size(), info, ColorFormat::kAnyData, wide.data(), w, 1 << 20,
                  /*keep_16=*/true);
  std::vector<uint8_t> narrow(size_t(h * w));
  decode_jpeg2000(file.data(), file.size(), info, ColorFormat::kAnyData, narrow.data(), w, 1 << 20);
  for (int i = 0; i < h * w; ++i) {
    EXPECT_EQ(wide[size_t(i)], g.samples[size_t(i)]) << i;
    EXPECT_EQ(narrow[size_t(i)], (g.samples[size_t(i)] * 255 + 32767) / 65535) << i;
  }
}

TEST(Jpeg2000Decoder, SubsampledSyccIsUpsampledByRepetitionAndConvertedToRgb) {
  const int h = 6, w = 7;
  Component y, cb, cr;
  for (int i = 0; i < h * w; ++i) y.samples.push_back(60 + i * 3);
  cb.dx = cb.dy = cr.dx = cr.dy = 2;
  for (int i = 0; i < 3 * 4; ++i) cb.samples.push_back(100 + i * 5), cr.samples.push_back(150 - i);
  const auto file = encode({y, cb, cr}, h, w, 8, OPJ_CLRSPC_SYCC, true);
  const auto info = read_jpeg2000_header(file.data(), file.size(), 1 << 20);
  std::vector<uint8_t> got(size_t(h * w * 3));
  decode_jpeg2000(file.data(), file.size(), info, ColorFormat::kRGB, got.data(), w * 3, 1 << 20);
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      const int l = y.samples[size_t(r * w + c)];
      const int u = cb.samples[size_t(r / 2 * 4 + c / 2)] - 128;
      const int v = cr.samples[size_t(r / 2 * 4 + c / 2)] - 128;
      const int want[3] = {l + int(1.402f * float(v)),
                           l - int(0.344f * float(u) + 0.714f * float(v)),
                           l + int(1.772f * float(u))};
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(got[size_t((r * w + c) * 3 + k)], std::clamp(want[k], 0, 255))
            << r << "," << c << "," << k;
    }
}

TEST(Jpeg2000Decoder, RefusesWhatItDoesNotReadAndBombsBeforeDecoding) {
  const int h = 8, w = 8;
  Component g;
  g.samples.assign(size_t(h * w), 3);
  const auto gray = encode({g}, h, w, 8, OPJ_CLRSPC_GRAY);
  EXPECT_EQ(value_error_of([&] { read_jpeg2000_header(gray.data(), gray.size(), 63); }),
            "JPEG 2000 of 8x8 pixels exceeds max_pixels (63)");
  const auto signed_file = encode({g}, h, w, 8, OPJ_CLRSPC_GRAY, false, 0, /*sgnd=*/true);
  EXPECT_EQ(
      value_error_of([&] { read_jpeg2000_header(signed_file.data(), signed_file.size(), 64); }),
      "JPEG 2000 with signed samples is not supported");
  const auto five = encode({g, g, g, g, g}, h, w, 8, OPJ_CLRSPC_UNSPECIFIED);
  EXPECT_EQ(value_error_of([&] { read_jpeg2000_header(five.data(), five.size(), 64); }),
            "JPEG 2000 with 5 components is not supported (1 to 4)");
  // 256 tiles of 2x2 for 1,024 pixels: refused before OpenJPEG allocates their parameters.
  const auto rgb32 = testing::random_image_u8(32, 32, 3, 2);
  for (const bool jp2 : {false, true}) {
    const auto tiny_tiles = encode(planes_of(rgb32, 32, 32, 3), 32, 32, 8, OPJ_CLRSPC_SRGB, jp2, 2);
    EXPECT_EQ(value_error_of(
                  [&] { read_jpeg2000_header(tiny_tiles.data(), tiny_tiles.size(), 1 << 20); }),
              "JPEG 2000 of 32x32 pixels in 16x16 tiles of 2x2 is not supported (tiles of 256 "
              "pixels on average at the least)");
  }
  const auto tiles_of_16 = encode(planes_of(rgb32, 32, 32, 3), 32, 32, 8, OPJ_CLRSPC_SRGB, true, 4);
  EXPECT_EQ(read_jpeg2000_header(tiles_of_16.data(), tiles_of_16.size(), 1 << 20).width, 32);
  // An unknown marker between SOC and SIZ (OpenJPEG would skip it, past our size checks).
  auto late_siz = encode({g}, h, w, 8, OPJ_CLRSPC_GRAY);
  late_siz.insert(late_siz.begin() + 2, {0xff, 0x30});
  EXPECT_EQ(value_error_of([&] { read_jpeg2000_header(late_siz.data(), late_siz.size(), 64); }),
            "invalid JPEG 2000 header: the codestream does not start with SOC and SIZ");
  const std::vector<uint8_t> junk{0xff, 0x4f, 0xff, 0x51, 0, 1, 2};
  EXPECT_EQ(value_error_of([&] {
              read_jpeg2000_header(junk.data(), junk.size(), 64);
            }).rfind("invalid JPEG 2000 header", 0),
            0u);
  // Cut inside the tile data: the header reads, the decode fails naming the data.
  const auto rgb = testing::random_image_u8(32, 32, 3, 1);
  auto cut = encode(planes_of(rgb, 32, 32, 3), 32, 32, 8, OPJ_CLRSPC_SRGB);
  cut.resize(cut.size() / 2);
  const auto info = read_jpeg2000_header(cut.data(), cut.size(), 1 << 20);
  std::vector<uint8_t> out(32 * 32 * 3);
  const std::string e = value_error_of([&] {
    decode_jpeg2000(cut.data(), cut.size(), info, ColorFormat::kRGB, out.data(), 96, 1 << 20);
  });
  EXPECT_TRUE(e.rfind("invalid JPEG 2000 data", 0) == 0 || e == "<no ValueError>") << e;
}
#else
TEST(Jpeg2000Decoder, WithoutOpenJpegItIsRefusedByName) {
  const std::vector<uint8_t> j2k{0xff, 0x4f, 0xff, 0x51};
  EXPECT_EQ(value_error_of([&] { read_jpeg2000_header(j2k.data(), j2k.size(), 64); }),
            "JPEG 2000 images are not supported: stoker was built without OpenJPEG");
}
#endif

}  // namespace
}  // namespace stoker::codecs
