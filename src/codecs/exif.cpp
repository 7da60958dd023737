#include "stoker/codecs/exif.hpp"

#include <cstring>

namespace stoker::codecs {
namespace {

struct Tiff {
  const uint8_t* p;
  size_t n;
  bool big_endian;
  bool u16(size_t at, uint32_t& v) const {
    if (at > n || n - at < 2) return false;
    v = big_endian ? uint32_t(p[at]) << 8 | p[at + 1] : uint32_t(p[at + 1]) << 8 | p[at];
    return true;
  }
  bool u32(size_t at, uint32_t& v) const {
    uint32_t hi = 0, lo = 0;
    if (!u16(at, big_endian ? hi : lo) || !u16(at + 2, big_endian ? lo : hi)) return false;
    v = hi << 16 | lo;
    return true;
  }
};

// The orientation in a TIFF structure (the APP1 payload after "Exif\0\0"), or 0.
int tiff_orientation(const uint8_t* p, size_t n) {
  if (n < 8) return 0;
  Tiff t{p, n, false};
  if (std::memcmp(p, "MM", 2) == 0)
    t.big_endian = true;
  else if (std::memcmp(p, "II", 2) != 0)
    return 0;
  uint32_t magic = 0, ifd = 0, count = 0;
  if (!t.u16(2, magic) || magic != 42 || !t.u32(4, ifd) || !t.u16(ifd, count)) return 0;
  for (uint32_t k = 0; k < count; ++k) {
    const size_t entry = size_t(ifd) + 2 + 12 * size_t(k);
    uint32_t tag = 0, type = 0, value = 0;
    if (!t.u16(entry, tag)) return 0;
    if (tag != 0x0112) continue;
    if (!t.u16(entry + 2, type)) return 0;
    // SHORT as the standard says; LONG and SLONG as some writers store it (libjpeg-based
    // viewers and PIL apply those too). A negative SLONG is out of range: as stored.
    if (type == 3) return t.u16(entry + 8, value) ? int(value) : 0;
    if (type == 4 || type == 9) return t.u32(entry + 8, value) && value <= 8 ? int(value) : 0;
    return 0;
  }
  return 0;
}

// 1..8, or 1 for anything else.
int valid(int o) { return o >= 1 && o <= 8 ? o : 1; }

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
uint32_t le32(const uint8_t* p) {
  return uint32_t(p[3]) << 24 | uint32_t(p[2]) << 16 | uint32_t(p[1]) << 8 | p[0];
}

}  // namespace

int png_exif_orientation(const uint8_t* data, size_t size) {
  if (size < 8 || std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) != 0) return 1;
  // Chunks: length, type, data, CRC; eXIf may come before or after the image data.
  for (size_t at = 8; at + 12 <= size;) {
    const size_t length = be32(data + at);
    if (length > size - at - 12) return 1;
    const uint8_t* type = data + at + 4;
    if (std::memcmp(type, "eXIf", 4) == 0) return valid(tiff_orientation(data + at + 8, length));
    if (std::memcmp(type, "IEND", 4) == 0) return 1;
    at += 12 + length;
  }
  return 1;
}

int webp_exif_orientation(const uint8_t* data, size_t size) {
  if (size < 12 || std::memcmp(data, "RIFF", 4) != 0 || std::memcmp(data + 8, "WEBP", 4) != 0)
    return 1;
  // RIFF chunks: fourcc, little-endian size, data padded to an even length.
  for (size_t at = 12; at + 8 <= size;) {
    const size_t length = le32(data + at + 4);
    if (length > size - at - 8) return 1;
    if (std::memcmp(data + at, "EXIF", 4) == 0) {
      const uint8_t* p = data + at + 8;
      const bool prefixed = length >= 6 && std::memcmp(p, "Exif\0\0", 6) == 0;
      return prefixed ? valid(tiff_orientation(p + 6, length - 6))
                      : valid(tiff_orientation(p, length));
    }
    at += 8 + length + (length & 1);
  }
  return 1;
}

int tiff_file_orientation(const uint8_t* data, size_t size) {
  return valid(tiff_orientation(data, size));
}

int jpeg_exif_orientation(const uint8_t* data, size_t size) {
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return 1;
  size_t pos = 2;
  // Segments up to the first scan: APPn and friends carry a 2-byte length after the marker.
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return 1;
    const uint8_t marker = data[pos + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) break;  // start of scan / end of image
    const size_t length = size_t(data[pos + 2]) << 8 | data[pos + 3];
    if (length < 2 || length > size - pos - 2) return 1;
    const uint8_t* seg = data + pos + 4;
    const size_t seg_len = length - 2;
    if (marker == 0xE1 && seg_len >= 6 && std::memcmp(seg, "Exif\0\0", 6) == 0) {
      int o = tiff_orientation(seg + 6, seg_len - 6);
      return o >= 1 && o <= 8 ? o : 1;
    }
    pos += 2 + length;
  }
  return 1;
}

}  // namespace stoker::codecs
