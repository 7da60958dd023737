#include "stoker/readers/fits_tiles.hpp"

#include <bit>
#include <optional>

namespace stoker::readers {

// cfitsio's fits_rdecomp, fits_rdecomp_short and fits_rdecomp_byte (ricecomp.c) with every
// write dropped and every read checked: the same reads in the same order.
bool rice_tile_in_bounds(std::span<const uint8_t> tile, int64_t pixels, int blocksize,
                         int bytepix) {
  const int fsbits = bytepix == 1 ? 3 : bytepix == 2 ? 4 : 5;
  const int fsmax = bytepix == 1 ? 6 : bytepix == 2 ? 14 : 25;
  const size_t first = bytepix == 1 ? 1 : bytepix == 2 ? 2 : 4;  // the first pixel, raw
  const int bbits = 1 << fsbits;
  size_t c = first;
  bool inside = tile.size() >= first;
  auto next = [&]() -> uint32_t {
    if (c >= tile.size()) {
      inside = false;
      return 1;  // nonzero: ends the zero-run loop below
    }
    return tile[c++];
  };
  uint32_t b = next();  // the bit buffer
  int nbits = 8;        // bits left in it
  for (int64_t i = 0; inside && i < pixels;) {
    nbits -= fsbits;
    while (inside && nbits < 0) {
      b = (b << 8) | next();
      nbits += 8;
    }
    if (!inside) return false;
    const int fs = int(b >> nbits) - 1;
    b &= (1u << nbits) - 1;
    const int64_t imax = std::min<int64_t>(i + blocksize, pixels);
    if (fs < 0) {  // equal pixels: no bits
      i = std::max(i, imax);
    } else if (fs == fsmax) {  // raw differences of bbits bits
      for (; inside && i < imax; ++i) {
        int k = bbits - nbits;
        for (k -= 8; k >= 0; k -= 8) b = next();
        if (nbits > 0) {
          b = next();
          b &= (1u << nbits) - 1;
        } else {
          b = 0;
        }
      }
    } else {  // Rice codes: a unary count of zeros, then fs bits
      for (; inside && i < imax; ++i) {
        while (inside && b == 0) {
          nbits += 8;
          b = next();
        }
        if (!inside) return false;
        const int nzero = nbits - int(std::bit_width(b));
        nbits -= nzero + 1;
        b ^= 1u << nbits;
        nbits -= fs;
        while (inside && nbits < 0) {
          b = (b << 8) | next();
          nbits += 8;
        }
        if (!inside) return false;
        b &= (1u << nbits) - 1;
      }
    }
  }
  return inside;
}

// cfitsio's pl_l2pi (pliocomp.c) for a tile of `pixels` pixels, reads only: the header words,
// then the instructions from the list's first to its declared length, an instruction that
// sets a high value reading the word after it, until the pixels are filled.
bool plio_tile_in_bounds(std::span<const uint8_t> tile, int64_t pixels) {
  const int64_t words = int64_t(tile.size() / 2);
  auto word = [&](int64_t i) -> std::optional<int64_t> {  // 1-based, as pl_l2pi counts
    if (i < 1 || i > words) return std::nullopt;
    return int64_t(int16_t(uint16_t(tile[size_t(2 * i - 2)] << 8 | tile[size_t(2 * i - 1)])));
  };
  const auto w3 = word(3);
  if (!w3) return false;
  int64_t length = *w3, start = 4;
  if (*w3 <= 0) {
    const auto w2 = word(2), w4 = word(4), w5 = word(5);
    if (!w2 || !w4 || !w5) return false;
    length = *w5 * 32768 + *w4;
    start = *w2 + 1;
  }
  if (pixels <= 0 || length <= 0) return true;
  int64_t x = 1;
  bool skip = false;
  for (int64_t ip = start; ip <= length; ++ip) {
    if (skip) {
      skip = false;
      continue;
    }
    const auto w = word(ip);
    if (!w) return false;
    const int64_t opcode = *w / 4096, data = *w & 4095;
    if (opcode == 0 || opcode == 4 || opcode == 5) {
      x += data;
    } else if (opcode == 1) {
      if (!word(ip + 1)) return false;
      skip = true;
    } else if (opcode == 6 || opcode == 7) {
      ++x;
    }
    if (x > pixels) break;
  }
  return true;
}

int64_t fits_tile_pixels(const std::vector<int64_t>& naxes, const std::vector<int64_t>& tile,
                         int64_t row) {
  int64_t pixels = 1;
  for (size_t i = 0; i < naxes.size(); ++i) {
    if (naxes[i] <= 0) return 0;                         // an empty image: no tile holds a pixel
    const int64_t count = (naxes[i] - 1) / tile[i] + 1;  // tiles along axis i
    const int64_t at = row % count * tile[i];
    row /= count;
    pixels *= std::min(tile[i], naxes[i] - at);
  }
  return pixels;
}

}  // namespace stoker::readers
