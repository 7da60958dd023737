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

enum class ColorFormat { kRGB, kBGR, kGray };
// "RGB", "BGR", "GRAY" (case-insensitive); throws ValueError otherwise.
ColorFormat parse_color_format(std::string_view s);
inline int color_channels(ColorFormat f) { return f == ColorFormat::kGray ? 1 : 3; }

}  // namespace stoker::codecs
