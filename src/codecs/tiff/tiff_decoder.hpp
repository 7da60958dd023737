// TIFF decoding on the CPU with libtiff: the first page (directory) of a file, in strips or
// tiles, chunky or planar, any compression libtiff reads (none, LZW, deflate, PackBits, JPEG,
// ...), 8- or 16-bit gray, gray+alpha, RGB and RGBA, and palettes of up to 8 bits; the other
// kinds libtiff can convert (bilevel, min-is-white, CMYK, YCbCr, Lab) through its 8-bit RGBA
// interface, as DALI's OpenCV fallback reads them.
//
// Conventions (DALI 2.4's, checked against it in python/tests/parity): RGB/BGR outputs drop
// alpha, ANY_DATA keeps the file's channels (palettes expanded to RGB; RGBA for the converted
// kinds with a fourth sample); GRAY from colour uses PIL's (ITU-R 601) weights at the file's
// precision; 16-bit samples keep their precision in decode16() (palettes: the colour map's
// 16-bit values) and become 8-bit rounded, round(v * 255 / 65535). Floating-point and signed
// samples are refused by name.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct TiffInfo {
  int64_t height = 0, width = 0;
  int channels = 0;  // as decoded: 1 gray, 2 gray+alpha, 3 RGB (palettes), 4 RGBA
  int bits = 8;      // 8, or 16 (16-bit samples, or a palette's colour map)
};

// Whether this build decodes TIFF (libtiff found at configure time).
bool tiff_available();

// Reads the first directory. Throws ValueError for a malformed file, a kind of TIFF not read
// (named), or an image above max_pixels (before its pixels are allocated).
TiffInfo read_tiff_header(const uint8_t* data, size_t size, int64_t max_pixels);
// 3 for RGB/BGR, 1 for GRAY, info.channels for ANY_DATA.
int tiff_output_channels(ColorFormat fmt, const TiffInfo& info);
// Decodes the image, or `window` of it, into rows of w * tiff_output_channels() samples,
// `row_stride` samples apart: bytes, or with `keep_16` (info.bits == 16) uint16 at full
// precision. Of 8-bit chunky images only the strips and tiles under the window are decoded.
// Corrupt or truncated data raises ValueError with libtiff's message.
void decode_tiff(const uint8_t* data, size_t size, const TiffInfo& info, ColorFormat fmt, void* out,
                 int64_t row_stride, int64_t max_pixels, bool keep_16 = false,
                 const PixelWindow* window = nullptr);

}  // namespace stoker::codecs
