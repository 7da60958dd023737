// LZ4 blocks written by hand from the block format's definition (token: literal length << 4 |
// match length - 4; literals; a 2-byte little-endian offset; 255-continued lengths), so that
// the decoder is checked against the format rather than against liblz4's own encoder. The
// Python tests compare with the lz4 package's encoder on random data.
#include "stoker/kernels/compression/lz4_inflate.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace stoker::kernels {
namespace {

std::vector<uint8_t> bytes(std::initializer_list<int> v) { return {v.begin(), v.end()}; }

// "abc", then a 12-byte match at offset 3, then the 5 literals the format ends with.
std::vector<uint8_t> repeat_block() {
  return bytes({0x38, 'a', 'b', 'c', 3, 0, 0x50, 'X', 'Y', 'Z', 'W', 'V'});
}
const std::string kRepeat = "abcabcabcabcabcXYZWV";

std::string inflate(const std::vector<uint8_t>& block, size_t capacity, int64_t* n) {
  std::string out(capacity, '\0');
  *n =
      lz4_inflate_cpu(block.data(), block.size(), reinterpret_cast<uint8_t*>(out.data()), capacity);
  return out.substr(0, *n < 0 ? 0 : size_t(*n));
}

TEST(Lz4Inflate, DecodesLiteralsAndMatches) {
  if (!lz4_available()) GTEST_SKIP() << "built without liblz4";
  int64_t n = 0;
  EXPECT_EQ(inflate(repeat_block(), 64, &n), kRepeat);
  EXPECT_EQ(n, 20);
  EXPECT_EQ(inflate(repeat_block(), 20, &n), kRepeat);  // exactly the inflated size
}

TEST(Lz4Inflate, DecodesLongLiteralRuns) {
  if (!lz4_available()) GTEST_SKIP() << "built without liblz4";
  std::vector<uint8_t> block{0xF0, 255, 30};  // 15 + 255 + 30 literals
  std::string expect;
  for (int i = 0; i < 300; ++i) expect.push_back(char('a' + i % 26));
  block.insert(block.end(), expect.begin(), expect.end());
  int64_t n = 0;
  EXPECT_EQ(inflate(block, 300, &n), expect);
}

TEST(Lz4Inflate, RefusesWhatDoesNotFitOrIsMalformed) {
  if (!lz4_available()) GTEST_SKIP() << "built without liblz4";
  int64_t n = 0;
  inflate(repeat_block(), 19, &n);
  EXPECT_EQ(n, kLz4TooLarge) << "one byte short of the inflated size";
  auto truncated = repeat_block();
  truncated.resize(8);
  inflate(truncated, 64, &n);
  EXPECT_EQ(n, kLz4Malformed);
  // An offset reaching before the start of the output.
  inflate(bytes({0x38, 'a', 'b', 'c', 9, 0, 0x50, 'X', 'Y', 'Z', 'W', 'V'}), 64, &n);
  EXPECT_EQ(n, kLz4Malformed);
}

TEST(Lz4Inflate, RandomBytesNeverReadOrWriteOutOfBounds) {
  if (!lz4_available()) GTEST_SKIP() << "built without liblz4";
  std::mt19937 rng(5);
  for (int t = 0; t < 2000; ++t) {
    std::vector<uint8_t> src(rng() % 64);
    for (auto& b : src) b = uint8_t(rng());
    std::vector<uint8_t> dst(rng() % 128);
    const int64_t n = lz4_inflate_cpu(src.data(), src.size(), dst.data(), dst.size());
    EXPECT_LE(n, int64_t(dst.size()));
  }
}

}  // namespace
}  // namespace stoker::kernels
