#include "stoker/codecs/nvjpeg2k/jp2_check.hpp"

namespace stoker::codecs {
namespace {

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}
uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

struct Box {
  uint32_t type = 0;
  size_t body = 0, end = 0;  // offsets in the file
};

// The box at `at` within [at, limit); false when its length does not fit.
bool read_box(const uint8_t* d, size_t at, size_t limit, Box& b) {
  if (limit - at < 8) return false;
  uint64_t len = be32(d + at);
  b.type = be32(d + at + 4);
  size_t header = 8;
  if (len == 1) {
    if (limit - at < 16) return false;
    len = uint64_t(be32(d + at + 8)) << 32 | be32(d + at + 12);
    header = 16;
  } else if (len == 0) {
    len = limit - at;
  }
  if (len < header || len > limit - at) return false;
  b.body = at + header, b.end = at + size_t(len);
  return true;
}

constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) << 24 | uint32_t(uint8_t(s[1])) << 16 |
         uint32_t(uint8_t(s[2])) << 8 | uint32_t(uint8_t(s[3]));
}

bool ends_with_eoc(const uint8_t* d, size_t begin, size_t end) {
  return end - begin >= 4 && d[begin] == 0xFF && d[begin + 1] == 0x4F && d[end - 2] == 0xFF &&
         d[end - 1] == 0xD9;
}

// Colour channels 0..n-1 associated in order, opacity (if any) last.
bool identity_cdef(const uint8_t* d, size_t body, size_t end) {
  if (end - body < 2) return false;
  const size_t n = be16(d + body);
  if (end - body < 2 + 6 * n) return false;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* e = d + body + 2 + 6 * i;
    const uint16_t channel = be16(e), type = be16(e + 2), assoc = be16(e + 4);
    if (channel != i) return false;
    const bool colour = type == 0 && assoc == i + 1;
    const bool opacity = (type == 1 || type == 2) && i + 1 == n;
    if (!colour && !opacity) return false;
  }
  return true;
}

}  // namespace

bool jpeg2000_plain_and_whole(const uint8_t* d, size_t size) {
  if (ends_with_eoc(d, 0, size)) return true;  // a raw codestream
  bool whole = false;
  for (size_t at = 0; at < size;) {
    Box b;
    if (!read_box(d, at, size, b)) return false;
    if (b.type == tag("jp2c")) whole = ends_with_eoc(d, b.body, b.end);
    if (b.type == tag("jp2h")) {
      for (size_t in = b.body; in < b.end;) {
        Box h;
        if (!read_box(d, in, b.end, h)) return false;
        if (h.type == tag("pclr") || h.type == tag("cmap")) return false;
        if (h.type == tag("cdef") && !identity_cdef(d, h.body, h.end)) return false;
        in = h.end;
      }
    }
    at = b.end;
  }
  return whole;
}

}  // namespace stoker::codecs
