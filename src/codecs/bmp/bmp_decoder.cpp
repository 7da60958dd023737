#include "stoker/codecs/bmp/bmp_decoder.hpp"

#include <algorithm>
#include <bit>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"

namespace stoker::codecs {
namespace {

constexpr uint32_t kRgb = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3, kAlphaBitfields = 6;

uint32_t u16(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }
uint32_t u32(const uint8_t* p) { return u16(p) | u16(p + 2) << 16; }

// A bit field's value scaled to 8 bits.
uint8_t field(uint32_t v, uint32_t mask) {
  if (mask == 0) return 255;
  const int shift = std::countr_zero(mask);
  const int bits = std::popcount(mask);
  const uint64_t max = (uint64_t(1) << bits) - 1;
  const uint64_t x = (v & mask) >> shift;
  return uint8_t((x * 255 + max / 2) / max);
}

// RLE8/RLE4 into palette indices (-1: skipped, black), rows bottom-up as stored.
std::vector<int16_t> decode_rle(const uint8_t* d, size_t n, const BmpInfo& info) {
  const int64_t w = info.width, h = info.height;
  std::vector<int16_t> idx(size_t(w * h), -1);
  const bool four = info.compression == kRle4;
  size_t pos = info.data_offset;
  int64_t x = 0, y = 0;
  auto need = [&](size_t k) {
    STOKER_ENFORCE(k <= n - pos, ValueError, "BMP: truncated RLE data at byte ", pos);
  };
  auto put = [&](int v) {
    if (x < w && y < h) idx[size_t(y * w + x)] = int16_t(v);
    ++x;
  };
  while (y < h) {
    need(2);
    const uint8_t count = d[pos], value = d[pos + 1];
    pos += 2;
    if (count > 0) {  // a run
      for (int k = 0; k < count; ++k) put(four ? (k % 2 ? value & 15 : value >> 4) : value);
    } else if (value == 0) {  // end of line
      x = 0, ++y;
    } else if (value == 1) {  // end of bitmap
      break;
    } else if (value == 2) {  // delta
      need(2);
      x += d[pos], y += d[pos + 1];
      pos += 2;
    } else {  // absolute: `value` pixels follow, padded to a 16-bit boundary
      const size_t bytes = four ? (size_t(value) + 1) / 2 : size_t(value);
      need(bytes + (bytes & 1));
      for (int k = 0; k < value; ++k)
        put(four ? (k % 2 ? d[pos + size_t(k / 2)] & 15 : d[pos + size_t(k / 2)] >> 4)
                 : d[pos + size_t(k)]);
      pos += bytes + (bytes & 1);
    }
  }
  return idx;
}

}  // namespace

BmpInfo read_bmp_header(const uint8_t* d, size_t n, int64_t max_pixels) {
  STOKER_ENFORCE(n >= 26 && d[0] == 'B' && d[1] == 'M', ValueError,
                 "BMP: truncated header or no 'BM' signature");
  BmpInfo info;
  info.data_offset = u32(d + 10);
  const uint32_t dib = u32(d + 14);
  if (dib == 12) {  // OS/2 BITMAPCOREHEADER
    info.width = u16(d + 18);
    info.height = u16(d + 20);
    info.bits = int(u16(d + 24));
    info.palette_entry = 3;
  } else {
    STOKER_ENFORCE(dib >= 40 && dib <= 124 && n >= 14 + size_t(dib), ValueError,
                   "BMP: unsupported or truncated info header of ", dib, " bytes");
    info.width = int32_t(u32(d + 18));
    const int32_t h = int32_t(u32(d + 22));
    info.top_down = h < 0;
    info.height = h < 0 ? -int64_t(h) : h;
    info.bits = int(u16(d + 28));
    info.compression = u32(d + 30);
    info.palette_size = u32(d + 46);
  }
  info.header_end = 14 + dib;
  const uint32_t c = info.compression;
  STOKER_ENFORCE(c == kRgb || c == kRle8 || c == kRle4 || c == kBitfields || c == kAlphaBitfields,
                 ValueError, "BMP compression ", c,
                 c == 4   ? " (embedded JPEG)"
                 : c == 5 ? " (embedded PNG)"
                          : "",
                 " is not supported");
  const int b = info.bits;
  STOKER_ENFORCE(b == 1 || b == 4 || b == 8 || b == 16 || b == 24 || b == 32, ValueError,
                 "BMP: unsupported bit depth ", b);
  STOKER_ENFORCE(
      (c != kRle8 || b == 8) && (c != kRle4 || b == 4) && (c < kBitfields || b == 16 || b == 32),
      ValueError, "BMP: compression ", c, " does not go with ", b, "-bit pixels");
  STOKER_ENFORCE(!(info.top_down && (c == kRle8 || c == kRle4)), ValueError,
                 "BMP: a top-down bitmap cannot be RLE-compressed");
  if (b == 16) {
    info.masks[0] = 0x7C00, info.masks[1] = 0x03E0, info.masks[2] = 0x001F;
  } else if (b == 32) {
    info.masks[0] = 0xFF0000, info.masks[1] = 0xFF00, info.masks[2] = 0xFF;
  }
  if (c == kBitfields || c == kAlphaBitfields) {
    // Masks sit in the header (V2 and later) or right after a 40-byte one.
    const size_t at = 54, count = c == kAlphaBitfields || dib >= 56 ? 4 : 3;
    STOKER_ENFORCE(n >= at + 4 * count, ValueError, "BMP: truncated bit field masks");
    for (size_t k = 0; k < count; ++k) info.masks[k] = u32(d + at + 4 * k);
    if (dib == 40) info.header_end += 4 * count;
    STOKER_ENFORCE(info.masks[0] && info.masks[1] && info.masks[2], ValueError,
                   "BMP: an empty colour bit field");
  }
  info.channels = info.masks[3] ? 4 : 3;
  if (b <= 8) {
    // Without a count, the palette fills the gap up to the pixels (writers often store fewer
    // than 2^bits entries); indices past it are black.
    const uint32_t full = 1u << b;
    const size_t gap = info.data_offset > info.header_end ? info.data_offset - info.header_end : 0;
    if (info.palette_size == 0)
      info.palette_size = uint32_t(std::min<size_t>(full, gap / size_t(info.palette_entry)));
    info.palette_size = std::min(info.palette_size, full);
    STOKER_ENFORCE(info.header_end + size_t(info.palette_size) * size_t(info.palette_entry) <= n,
                   ValueError, "BMP: truncated palette");
  }
  STOKER_ENFORCE(info.width > 0 && info.height > 0, ValueError, "BMP of ", info.width, "x",
                 info.height, " pixels");
  STOKER_ENFORCE(info.width * info.height <= max_pixels, ValueError, "BMP of ", info.width, "x",
                 info.height, " pixels exceeds max_pixels (", max_pixels, ")");
  STOKER_ENFORCE(info.data_offset >= info.header_end && info.data_offset <= n, ValueError,
                 "BMP: pixel data offset ", info.data_offset, " is outside the file");
  return info;
}

int bmp_output_channels(ColorFormat fmt, const BmpInfo& info) {
  return fmt == ColorFormat::kAnyData ? info.channels : color_channels(fmt);
}

void decode_bmp(const uint8_t* d, size_t n, const BmpInfo& info, ColorFormat fmt, uint8_t* out,
                int64_t row_stride) {
  const int64_t w = info.width, h = info.height, c = info.channels;
  const uint8_t* pal = d + info.header_end;
  const bool rle = info.compression == kRle8 || info.compression == kRle4;
  std::vector<int16_t> indices;
  const size_t row_bytes = (size_t(w) * size_t(info.bits) + 31) / 32 * 4;
  if (rle) {
    indices = decode_rle(d, n, info);
  } else {
    STOKER_ENFORCE(row_bytes * size_t(h) <= n - info.data_offset, ValueError,
                   "BMP: truncated pixel data (", n - info.data_offset, " bytes for ", h,
                   " rows of ", row_bytes, ")");
  }
  std::vector<uint8_t> row(size_t(w * c));
  auto set_palette = [&](uint8_t* px, int64_t index) {
    if (index < 0 || index >= int64_t(info.palette_size)) {  // skipped or out of range: black
      px[0] = px[1] = px[2] = 0;
      return;
    }
    const uint8_t* e = pal + size_t(index) * size_t(info.palette_entry);
    px[0] = e[2], px[1] = e[1], px[2] = e[0];  // stored BGR
  };
  for (int64_t y = 0; y < h; ++y) {
    const int64_t file_row = info.top_down ? y : h - 1 - y;
    const uint8_t* src = d + info.data_offset + size_t(file_row) * row_bytes;
    for (int64_t x = 0; x < w; ++x) {
      uint8_t* px = row.data() + x * c;
      if (rle) {
        set_palette(px, indices[size_t(file_row * w + x)]);
      } else if (info.bits <= 8) {
        const int per = 8 / info.bits;
        const int shift = 8 - info.bits * (1 + int(x % per));
        set_palette(px, (src[x / per] >> shift) & ((1 << info.bits) - 1));
      } else if (info.bits == 24) {
        px[0] = src[3 * x + 2], px[1] = src[3 * x + 1], px[2] = src[3 * x];
      } else {
        const uint32_t v = info.bits == 16 ? u16(src + 2 * x) : u32(src + 4 * x);
        for (int k = 0; k < c; ++k) px[k] = field(v, info.masks[k]);
      }
    }
    convert_row(row.data(), c, fmt, out + y * row_stride, w);
  }
}

}  // namespace stoker::codecs
