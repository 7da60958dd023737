#include "stoker/codecs/image_format.hpp"

#include <cstdio>
#include <cstring>

#include "stoker/core/error.hpp"

namespace stoker::codecs {

std::string_view format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kPnm:
      return "PNM";
    case ImageFormat::kGif:
      return "GIF";
    case ImageFormat::kWebp:
      return "WebP";
    case ImageFormat::kTiff:
      return "TIFF";
    case ImageFormat::kJpeg2000:
      return "JPEG 2000";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

ImageFormat detect_format(const uint8_t* d, size_t n) {
  auto starts = [&](const char* magic, size_t len, size_t at = 0) {
    return n >= at + len && std::memcmp(d + at, magic, len) == 0;
  };
  if (starts("\xff\xd8\xff", 3)) return ImageFormat::kJpeg;
  if (starts("\x89PNG\r\n\x1a\n", 8)) return ImageFormat::kPng;
  if (starts("BM", 2)) return ImageFormat::kBmp;
  if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return ImageFormat::kPnm;
  if (starts("GIF8", 4)) return ImageFormat::kGif;
  if (starts("RIFF", 4) && starts("WEBP", 4, 8)) return ImageFormat::kWebp;
  // The magics below contain NUL bytes: `starts` compares the given length, not to the NUL.
  if (starts("II*\0", 4) || starts("MM\0*", 4)) return ImageFormat::kTiff;  // NOLINT
  if (starts("\x00\x00\x00\x0cjP  ", 8) || starts("\xff\x4f\xff\x51", 4))   // NOLINT
    return ImageFormat::kJpeg2000;
  return ImageFormat::kUnknown;
}

std::string leading_bytes_hex(const uint8_t* d, size_t size, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < size && i < n; ++i) {
    std::snprintf(buf, sizeof buf, i ? " %02x" : "%02x", d[i]);
    s += buf;
  }
  return size == 0 ? "no data: 0 bytes" : s;
}

ColorFormat parse_color_format(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (u == "RGB") return ColorFormat::kRGB;
  if (u == "BGR") return ColorFormat::kBGR;
  if (u == "GRAY") return ColorFormat::kGray;
  if (u == "ANY_DATA") return ColorFormat::kAnyData;
  throw ValueError("unsupported output_type '" + std::string(s) +
                   "'; supported: RGB, BGR, GRAY, ANY_DATA");
}

}  // namespace stoker::codecs
