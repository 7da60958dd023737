// What stoker reads of FITS files itself, before cfitsio: the header walk and the tile checks
// (the images cfitsio decodes are compared with astropy's from Python, test_fits_reader.py, and
// the whole path is fuzzed, fuzz/fits_fuzzer.cpp).
#include "stoker/readers/fits.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/readers/fits_header.hpp"
#include "stoker/readers/fits_tiles.hpp"

namespace stoker::readers {
namespace {

std::string value_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ValueError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ValueError";
  return {};
}

// A header of `cards` ("KEY = value" as FITS writes them) and END, in whole 2880-byte blocks,
// then `data` zero bytes rounded up to a block.
std::vector<uint8_t> hdu(const std::vector<std::pair<std::string, std::string>>& cards,
                         size_t data = 0) {
  std::string text;
  for (const auto& [key, value] : cards) {
    std::string card = key;
    card.resize(8, ' ');
    card += "= " + std::string(value.size() < 20 ? 20 - value.size() : 0, ' ') + value;
    card.resize(80, ' ');
    text += card;
  }
  text += "END";
  text.resize((text.size() + 2879) / 2880 * 2880, ' ');
  std::vector<uint8_t> out(text.begin(), text.end());
  out.resize(out.size() + (data + 2879) / 2880 * 2880, 0);
  return out;
}

std::vector<uint8_t> primary() {
  return hdu({{"SIMPLE", "T"}, {"BITPIX", "8"}, {"NAXIS", "0"}, {"EXTEND", "T"}});
}

std::vector<uint8_t> compressed(const std::string& ztile2) {
  return hdu({{"XTENSION", "'BINTABLE'"},
              {"BITPIX", "8"},
              {"NAXIS", "2"},
              {"NAXIS1", "8"},
              {"NAXIS2", "6"},
              {"PCOUNT", "0"},
              {"GCOUNT", "1"},
              {"TFIELDS", "1"},
              {"TFORM1", "'1PB(0)'"},
              {"ZIMAGE", "T"},
              {"ZBITPIX", "16"},
              {"ZNAXIS", "2"},
              {"ZNAXIS1", "8"},
              {"ZNAXIS2", "6"},
              {"ZTILE1", "8"},
              {"ZTILE2", ztile2},
              {"ZCMPTYPE", "'RICE_1'"},
              {"ZVAL1", "32"}},
             48);
}

std::vector<uint8_t> join(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(FitsHeaderWalk, FollowsTheHdusAndChecksCompressedHeaders) {
  const auto good = join(primary(), compressed("1"));
  FitsHeaderWalk walk(good, "good.fits");
  walk.check_to(5);  // two HDUs: the walk ends where the file does

  const auto zero = join(primary(), compressed("0"));
  FitsHeaderWalk refused(zero, "zero.fits");
  refused.check_to(1);
  const auto message = value_error([&] { refused.check_to(2); });
  EXPECT_EQ(message, "zero.fits: HDU 2: ZTILE2 = 0; tile sizes must be positive integers");
  // Refused once, refused for every later HDU: cfitsio must not parse it.
  EXPECT_EQ(value_error([&] { refused.check_to(3); }), message);

  const auto half = join(primary(), compressed("0.5"));
  FitsHeaderWalk fraction(half, "half.fits");
  EXPECT_EQ(value_error([&] { fraction.check_to(2); }),
            "half.fits: HDU 2: ZTILE2 = 0.5; tile sizes must be positive integers");
}

TEST(FitsHeaderWalk, RefusesWhatItCannotFollow) {
  auto image = [](const std::string& naxis1, const std::string& pcount) {
    return join(primary(), hdu({{"XTENSION", "'IMAGE'"},
                                {"BITPIX", "16"},
                                {"NAXIS", "1"},
                                {"NAXIS1", naxis1},
                                {"PCOUNT", pcount},
                                {"GCOUNT", "1"}}));
  };
  const auto fraction = image("3.0", "0");
  EXPECT_EQ(value_error([&] { FitsHeaderWalk(fraction, "f.fits").check_to(2); }),
            "f.fits: HDU 2: NAXIS1 = 3.0 is not an integer");
  const auto huge = image("4611686018427387904", "0");
  EXPECT_EQ(value_error([&] { FitsHeaderWalk(huge, "h.fits").check_to(2); }),
            "h.fits: HDU 2 declares more data than a file can hold");
  auto twice = image("4", "0");
  const std::string copy = "PCOUNT  =                    2", end = "END     ";
  std::copy(copy.begin(), copy.end(), twice.begin() + 2880 + 6 * 80);  // over END
  std::copy(end.begin(), end.end(), twice.begin() + 2880 + 7 * 80);
  EXPECT_EQ(value_error([&] { FitsHeaderWalk(twice, "t.fits").check_to(2); }),
            "t.fits: HDU 2: PCOUNT is given twice, as 0 and as 2");
}

TEST(FitsTiles, RiceReadsStayInsideTheTile) {
  // 4 raw bytes (the first pixel), then a block code of 5 zero bits: 32 equal pixels.
  const std::vector<uint8_t> flat = {0, 0, 0, 7, 0};
  EXPECT_TRUE(rice_tile_in_bounds(flat, 32, 32, 4));
  EXPECT_FALSE(rice_tile_in_bounds({flat.data(), 4}, 32, 32, 4));
  // A second block needs more bits than the tile holds.
  EXPECT_FALSE(rice_tile_in_bounds(flat, 64, 32, 4));
  // A block of raw 32-bit differences (code 26 = fsmax + 1 in 5 bits) needs 4 bytes a pixel.
  std::vector<uint8_t> raw = {0, 0, 0, 0, 26 << 3};
  raw.resize(5 + 4 * 2, 0);
  EXPECT_TRUE(rice_tile_in_bounds(raw, 2, 32, 4));
  EXPECT_FALSE(rice_tile_in_bounds(raw, 3, 32, 4));
  EXPECT_FALSE(rice_tile_in_bounds({}, 1, 32, 2));
}

TEST(FitsTiles, PlioReadsStayInsideTheList) {
  // 16-bit words, big-endian. The short form: word 3 (> 0) is the list's length, instructions
  // from word 4 (opcode 4: `data` pixels of the high value).
  auto words = [](std::vector<int16_t> w) {
    std::vector<uint8_t> out;
    for (auto v : w) out.push_back(uint8_t(uint16_t(v) >> 8)), out.push_back(uint8_t(v));
    return out;
  };
  EXPECT_TRUE(plio_tile_in_bounds(words({0, 0, 4, 4 * 4096 + 10}), 10));
  EXPECT_FALSE(plio_tile_in_bounds(words({0, 0, 5, 4 * 4096 + 10}), 20));  // length past the list
  EXPECT_FALSE(plio_tile_in_bounds(words({0, 0, 4, 1 * 4096}), 10));       // a high value's word
  // The long form: length in words 4 and 5, first instruction at word 2 + 1.
  EXPECT_FALSE(plio_tile_in_bounds(words({0, -8, -100, 4, 0}), 10));  // starts before the list
  EXPECT_FALSE(plio_tile_in_bounds(words({0, 0}), 10));
}

TEST(FitsTiles, TilePixelsFollowTheTableRows) {
  const std::vector<int64_t> naxes = {47, 33}, tile = {8, 16};  // 6 x 3 tiles
  EXPECT_EQ(fits_tile_pixels(naxes, tile, 0), 8 * 16);
  EXPECT_EQ(fits_tile_pixels(naxes, tile, 5), 7 * 16);  // the last of the first row of tiles
  EXPECT_EQ(fits_tile_pixels(naxes, tile, 17), 7 * 1);  // the last tile
  EXPECT_EQ(fits_tile_pixels({0, 5}, {1, 1}, 0), 0);
}

TEST(FitsFile, RefusedByNameWithoutCfitsio) {
  const auto file = join(primary(), compressed("1"));
  if (fits_available()) {
    FitsFile fits(file, "x.fits");
    EXPECT_EQ(value_error([&] { fits.image(1); }),
              "x.fits: HDU 1 holds no image (NAXIS = 0; the primary HDU of a file with extensions "
              "often holds none: hdu_indices counts from 1, its default is [2])");
    return;
  }
  try {
    FitsFile fits(file, "x.fits");
    ADD_FAILURE() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "cannot read FITS file 'x.fits': stoker was built without cfitsio");
  }
}

}  // namespace
}  // namespace stoker::readers
