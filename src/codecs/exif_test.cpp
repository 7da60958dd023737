#include "stoker/codecs/exif.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace stoker::codecs {
namespace {

// SOI, an APP0, an APP1 Exif segment holding `tiff`, then SOS.
std::vector<uint8_t> jpeg_with_tiff(const std::vector<uint8_t>& tiff) {
  std::vector<uint8_t> j = {0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 'J', 'F'};
  std::vector<uint8_t> seg = {'E', 'x', 'i', 'f', 0, 0};
  seg.insert(seg.end(), tiff.begin(), tiff.end());
  j.push_back(0xFF), j.push_back(0xE1);
  j.push_back(uint8_t((seg.size() + 2) >> 8)), j.push_back(uint8_t(seg.size() + 2));
  j.insert(j.end(), seg.begin(), seg.end());
  for (uint8_t b : {0xFF, 0xDA, 0x00, 0x02}) j.push_back(b);
  return j;
}

// A TIFF header and IFD0 with `entries` (tag, type, value) in the given byte order; the value
// is a LONG's 4 bytes for types 4 (LONG) and 9 (SLONG), else a SHORT's 2 and padding.
std::vector<uint8_t> tiff(bool big, const std::vector<std::array<uint32_t, 3>>& entries) {
  std::vector<uint8_t> t;
  auto u16 = [&](uint16_t v) {
    if (big)
      t.push_back(uint8_t(v >> 8)), t.push_back(uint8_t(v));
    else
      t.push_back(uint8_t(v)), t.push_back(uint8_t(v >> 8));
  };
  auto u32 = [&](uint32_t v) {
    if (big)
      u16(uint16_t(v >> 16)), u16(uint16_t(v));
    else
      u16(uint16_t(v)), u16(uint16_t(v >> 16));
  };
  t.push_back(big ? 'M' : 'I'), t.push_back(big ? 'M' : 'I');
  u16(42), u32(8), u16(uint16_t(entries.size()));
  for (auto [tag, type, value] : entries) {
    u16(uint16_t(tag)), u16(uint16_t(type)), u32(1);
    if (type == 4 || type == 9)
      u32(value);
    else
      u16(uint16_t(value)), u16(0);
  }
  u32(0);
  return t;
}

int orientation_of(const std::vector<uint8_t>& j) {
  return jpeg_exif_orientation(j.data(), j.size());
}

TEST(Exif, ReadsTheOrientationInBothByteOrders) {
  for (bool big : {false, true})
    for (uint16_t o = 1; o <= 8; ++o)
      EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(big, {{0x010F, 2, 7}, {0x0112, 3, o}}))), o);
}

TEST(Exif, ReadsAnOrientationStoredAsLongOrSlong) {
  // Some writers store it as a LONG or SLONG: its whole 4 bytes are the value, so a big-endian
  // file's value is in the last two (reading a SHORT there gives 0).
  for (bool big : {false, true})
    for (uint32_t type : {4u, 9u})
      for (uint32_t o = 1; o <= 8; ++o)
        EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(big, {{0x010F, 2, 7}, {0x0112, type, o}}))),
                  int(o))
            << "type " << type << (big ? " MM" : " II");
  for (bool big : {false, true}) {
    EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(big, {{0x0112, 9, uint32_t(-6)}}))), 1);
    EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(big, {{0x0112, 4, 0x10006}}))), 1);
    EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(big, {{0x0112, 4, 9}}))), 1);
  }
  auto j = jpeg_with_tiff(tiff(true, {{0x0112, 4, 6}}));
  for (size_t cut = 0; cut < j.size() - 4; ++cut)  // every truncation: no crash, 1 or 6
    EXPECT_TRUE(jpeg_exif_orientation(j.data(), cut) == 1 ||
                jpeg_exif_orientation(j.data(), cut) == 6);
}

TEST(Exif, AnythingOddMeansAsStored) {
  EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(false, {{0x010F, 2, 7}}))), 1);  // no tag
  EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(false, {{0x0112, 3, 0}}))), 1);  // 0
  EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(false, {{0x0112, 3, 9}}))), 1);  // 9
  EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(false, {{0x0112, 1, 6}}))), 1);  // a BYTE
  EXPECT_EQ(orientation_of(jpeg_with_tiff(tiff(false, {{0x0112, 5, 6}}))), 1);  // a RATIONAL
  auto j = jpeg_with_tiff(tiff(true, {{0x0112, 3, 6}}));
  for (size_t cut = 0; cut < j.size() - 4; ++cut)  // every truncation: no crash, 1 or 6
    EXPECT_TRUE(jpeg_exif_orientation(j.data(), cut) == 1 ||
                jpeg_exif_orientation(j.data(), cut) == 6);
  j[12] = 0xFF;  // the APP1 length now runs past the end
  EXPECT_EQ(orientation_of(j), 1);
  EXPECT_EQ(jpeg_exif_orientation(nullptr, 0), 1);
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G'};
  EXPECT_EQ(orientation_of(png), 1);
}

// A PNG signature, an IHDR-like chunk, an eXIf chunk of `payload` (CRCs left 0: not checked),
// then IEND; `claimed` overrides the eXIf chunk's length field.
std::vector<uint8_t> png_with(const std::vector<uint8_t>& payload, int64_t claimed = -1) {
  std::vector<uint8_t> p = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  auto chunk = [&](const char* type, const std::vector<uint8_t>& data, uint32_t length) {
    for (int k = 3; k >= 0; --k) p.push_back(uint8_t(length >> (8 * k)));
    p.insert(p.end(), type, type + 4);
    p.insert(p.end(), data.begin(), data.end());
    for (int k = 0; k < 4; ++k) p.push_back(0);
  };
  chunk("IHDR", std::vector<uint8_t>(13, 1), 13);
  chunk("eXIf", payload, claimed >= 0 ? uint32_t(claimed) : uint32_t(payload.size()));
  chunk("IEND", {}, 0);
  return p;
}

// RIFF/WEBP with a VP8X chunk and an EXIF chunk of `payload` (odd sizes padded).
std::vector<uint8_t> webp_with(const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> w = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E', 'B', 'P'};
  auto chunk = [&](const char* type, const std::vector<uint8_t>& data) {
    w.insert(w.end(), type, type + 4);
    for (int k = 0; k < 4; ++k) w.push_back(uint8_t(data.size() >> (8 * k)));
    w.insert(w.end(), data.begin(), data.end());
    if (data.size() & 1) w.push_back(0);
  };
  chunk("VP8X", std::vector<uint8_t>(10, 0));
  chunk("EXIF", payload);
  return w;
}

TEST(Exif, ReadsPngWebpAndTiffOrientations) {
  const auto t6 = tiff(true, {{0x0112, 3, 6}});
  EXPECT_EQ(png_exif_orientation(png_with(t6).data(), png_with(t6).size()), 6);
  const auto w = webp_with(t6);
  EXPECT_EQ(webp_exif_orientation(w.data(), w.size()), 6);
  std::vector<uint8_t> prefixed = {'E', 'x', 'i', 'f', 0, 0};
  const auto t3 = tiff(false, {{0x0112, 3, 3}});
  prefixed.insert(prefixed.end(), t3.begin(), t3.end());
  const auto wp = webp_with(prefixed);
  EXPECT_EQ(webp_exif_orientation(wp.data(), wp.size()), 3);
  EXPECT_EQ(tiff_file_orientation(t3.data(), t3.size()), 3);
}

TEST(Exif, ChunksThatLieOrEndEarlyMeanAsStored) {
  const auto t6 = tiff(true, {{0x0112, 3, 6}});
  const auto lying = png_with(t6, 1 << 30);
  EXPECT_EQ(png_exif_orientation(lying.data(), lying.size()), 1);
  auto cut = png_with(t6);
  cut.resize(cut.size() - 20);
  EXPECT_EQ(png_exif_orientation(cut.data(), cut.size()), 1);
  const auto w = webp_with(t6);
  for (size_t n = 0; n < w.size(); ++n) {  // every prefix of the file: no read past it
    const std::vector<uint8_t> prefix(w.begin(), w.begin() + std::ptrdiff_t(n));  // ASan: exact
    const int o = webp_exif_orientation(prefix.data(), prefix.size());
    EXPECT_TRUE(o == 1 || o == 6) << n;
  }
  const auto nine = tiff(false, {{0x0112, 3, 9}});
  EXPECT_EQ(tiff_file_orientation(nine.data(), nine.size()), 1);
  EXPECT_EQ(png_exif_orientation(t6.data(), t6.size()), 1);  // not a PNG
}

}  // namespace
}  // namespace stoker::codecs
