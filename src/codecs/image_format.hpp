// Image container detection from magic bytes, and the colour formats decoders produce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::codecs {

enum class ImageFormat { kUnknown, kJpeg, kPng, kBmp, kPnm, kGif, kWebp, kTiff, kJpeg2000 };
std::string_view format_name(ImageFormat f);
ImageFormat detect_format(const uint8_t* data, size_t size);
// "ff d8 ff e0 …" — the first bytes, for error messages about unrecognised data.
std::string leading_bytes_hex(const uint8_t* data, size_t size, size_t n = 8);

// kAnyData keeps the image's own channels (gray 1, gray+alpha 2, colour 3, with alpha 4).
enum class ColorFormat { kRGB, kBGR, kGray, kAnyData };
// "RGB", "BGR", "GRAY", "ANY_DATA" (case-insensitive); throws ValueError otherwise.
ColorFormat parse_color_format(std::string_view s);
// Channels of an output in format f; 0 for kAnyData (the image decides).
inline int color_channels(ColorFormat f) {
  return f == ColorFormat::kGray ? 1 : f == ColorFormat::kAnyData ? 0 : 3;
}

// A window of an image, rows [y, y + h) and columns [x, x + w), for the decoders that decode
// one without decoding the whole image.
struct PixelWindow {
  int64_t y = 0, x = 0, h = 0, w = 0;
};

}  // namespace stoker::codecs
