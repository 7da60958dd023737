#include "stoker/codecs/nvjpeg2k/jp2_check.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace stoker::codecs {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes box(const char* type, const Bytes& body) {
  const uint32_t len = uint32_t(8 + body.size());
  Bytes b{uint8_t(len >> 24), uint8_t(len >> 16), uint8_t(len >> 8), uint8_t(len)};
  for (int k = 0; k < 4; ++k) b.push_back(uint8_t(type[k]));
  b.insert(b.end(), body.begin(), body.end());
  return b;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
const Bytes kCodestream{0xFF, 0x4F, 0xFF, 0x51, 1, 2, 3, 0xFF, 0xD9};  // SOC SIZ ... EOC
const Bytes kTruncated{0xFF, 0x4F, 0xFF, 0x51, 1, 2, 3};
Bytes cdef(std::vector<std::array<uint16_t, 3>> entries) {
  Bytes b{uint8_t(entries.size() >> 8), uint8_t(entries.size())};
  for (auto e : entries)
    for (uint16_t v : e) b.push_back(uint8_t(v >> 8)), b.push_back(uint8_t(v));
  return b;
}
Bytes jp2(const Bytes& header_boxes, const Bytes& codestream) {
  return cat({box("jP  ", {0x0D, 0x0A, 0x87, 0x0A}), box("ftyp", Bytes(12, 0)),
              box("jp2h", cat({box("ihdr", Bytes(14, 0)), header_boxes})),
              box("jp2c", codestream)});
}
bool check(const Bytes& b) { return jpeg2000_plain_and_whole(b.data(), b.size()); }

TEST(Jp2Check, WholeCodestreamsAndPlainJp2sPass) {
  EXPECT_TRUE(check(kCodestream));
  EXPECT_TRUE(check(jp2(box("colr", Bytes(7, 0)), kCodestream)));
  // RGBA as Pillow writes it: colour channels in order, then opacity.
  EXPECT_TRUE(
      check(jp2(box("cdef", cdef({{0, 0, 1}, {1, 0, 2}, {2, 0, 3}, {3, 1, 0}})), kCodestream)));
}

TEST(Jp2Check, TruncatedOrRemappedFilesAreLeftToTheCpu) {
  EXPECT_FALSE(check(kTruncated));
  EXPECT_FALSE(check(jp2({}, kTruncated)));
  Bytes cut = jp2({}, kCodestream);
  cut.resize(cut.size() - 3);  // the jp2c box claims more than the file holds
  EXPECT_FALSE(check(cut));
  EXPECT_FALSE(check(jp2(box("pclr", Bytes(10, 0)), kCodestream)));
  EXPECT_FALSE(check(jp2(box("cmap", Bytes(4, 0)), kCodestream)));
  EXPECT_FALSE(check(jp2(box("cdef", cdef({{0, 0, 3}, {1, 0, 2}, {2, 0, 1}})), kCodestream)));
  EXPECT_FALSE(check(jp2(box("cdef", cdef({{0, 1, 0}, {1, 0, 1}})), kCodestream)));
  EXPECT_FALSE(check(Bytes{}));
  EXPECT_FALSE(check(Bytes{0, 0, 0, 4, 'j', 'p', '2', 'c'}));  // a length below its header
}

}  // namespace
}  // namespace stoker::codecs
