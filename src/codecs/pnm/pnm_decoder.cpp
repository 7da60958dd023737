#include "stoker/codecs/pnm/pnm_decoder.hpp"

#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"

namespace stoker::codecs {
namespace {

bool is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Skips whitespace and '#' comments (to the end of their line).
void skip_space(const uint8_t* d, size_t n, size_t& pos) {
  while (pos < n) {
    if (d[pos] == '#') {
      while (pos < n && d[pos] != '\n' && d[pos] != '\r') ++pos;
    } else if (is_space(d[pos])) {
      ++pos;
    } else {
      return;
    }
  }
}

int64_t read_number(const uint8_t* d, size_t n, size_t& pos, const char* what) {
  skip_space(d, n, pos);
  STOKER_ENFORCE(pos < n && d[pos] >= '0' && d[pos] <= '9', ValueError, "PNM: expected the ", what,
                 " at byte ", pos);
  int64_t v = 0;
  while (pos < n && d[pos] >= '0' && d[pos] <= '9') {
    v = v * 10 + (d[pos++] - '0');
    STOKER_ENFORCE(v <= (int64_t(1) << 31), ValueError, "PNM: the ", what, " is too large");
  }
  return v;
}

}  // namespace

PnmInfo read_pnm_header(const uint8_t* data, size_t size, int64_t max_pixels) {
  STOKER_ENFORCE(size >= 2 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6', ValueError,
                 "PNM: expected P1..P6");
  PnmInfo info;
  info.kind = char(data[1]);
  size_t pos = 2;
  info.width = read_number(data, size, pos, "width");
  info.height = read_number(data, size, pos, "height");
  const bool bitmap = info.kind == '1' || info.kind == '4';
  info.maxval = bitmap ? 1 : int(read_number(data, size, pos, "maxval"));
  STOKER_ENFORCE(info.maxval >= 1 && info.maxval <= 65535, ValueError, "PNM: maxval ", info.maxval,
                 " is outside 1..65535");
  STOKER_ENFORCE(info.width > 0 && info.height > 0, ValueError, "PNM of ", info.width, "x",
                 info.height, " pixels");
  STOKER_ENFORCE(info.width * info.height <= max_pixels, ValueError, "PNM of ", info.width, "x",
                 info.height, " pixels exceeds max_pixels (", max_pixels, ")");
  // Exactly one whitespace character separates the header from binary data.
  STOKER_ENFORCE(pos < size && is_space(data[pos]), ValueError,
                 "PNM: no whitespace after the header");
  info.data_offset = pos + 1;
  info.channels = info.kind == '3' || info.kind == '6' ? 3 : 1;
  return info;
}

int pnm_output_channels(ColorFormat fmt, const PnmInfo& info) {
  return fmt == ColorFormat::kAnyData ? info.channels : color_channels(fmt);
}

void decode_pnm(const uint8_t* data, size_t size, const PnmInfo& info, ColorFormat fmt,
                uint8_t* out, int64_t row_stride) {
  const int64_t w = info.width, h = info.height, c = info.channels;
  std::vector<uint8_t> row(size_t(w * c));  // one decoded row at the file's channels
  const bool ascii = info.kind <= '3';
  const bool wide = info.maxval > 255;
  size_t pos = ascii ? info.data_offset - 1 : info.data_offset;
  auto scale = [&](int64_t v) -> uint8_t {
    STOKER_ENFORCE(v <= info.maxval, ValueError, "PNM: sample ", v, " exceeds maxval ",
                   info.maxval);
    if (info.kind == '1' || info.kind == '4') return v ? 0 : 255;  // PBM: 1 is black
    return info.maxval == 255 ? uint8_t(v) : uint8_t((v * 255 + info.maxval / 2) / info.maxval);
  };
  for (int64_t y = 0; y < h; ++y) {
    if (ascii) {
      for (int64_t k = 0; k < w * c; ++k) {
        if (info.kind == '1') {  // PBM digits need no separators
          skip_space(data, size, pos);
          STOKER_ENFORCE(pos < size && (data[pos] == '0' || data[pos] == '1'), ValueError,
                         "PNM: truncated or bad PBM data at byte ", pos);
          row[size_t(k)] = scale(data[pos++] - '0');
        } else {
          row[size_t(k)] = scale(read_number(data, size, pos, "sample"));
        }
      }
    } else if (info.kind == '4') {
      const size_t bytes = size_t((w + 7) / 8);
      STOKER_ENFORCE(bytes <= size - pos, ValueError, "PNM: truncated data (row ", y, " of ", h,
                     ")");
      for (int64_t x = 0; x < w; ++x)
        row[size_t(x)] = scale((data[pos + size_t(x / 8)] >> (7 - x % 8)) & 1);
      pos += bytes;
    } else {
      const size_t bytes = size_t(w * c) * (wide ? 2 : 1);
      STOKER_ENFORCE(bytes <= size - pos, ValueError, "PNM: truncated data (row ", y, " of ", h,
                     ")");
      for (int64_t k = 0; k < w * c; ++k)
        row[size_t(k)] =
            scale(wide ? int64_t(data[pos + 2 * size_t(k)]) << 8 | data[pos + 2 * size_t(k) + 1]
                       : data[pos + size_t(k)]);
      pos += bytes;
    }
    convert_row(row.data(), c, fmt, out + y * row_stride, w);
  }
}

}  // namespace stoker::codecs
