// PNG decoding on the CPU with libpng: every colour type and bit depth (1/2/4/8/16-bit gray,
// palette, gray+alpha, RGB, RGBA), Adam7 interlacing, tRNS transparency.
//
// Conventions (those of PIL and stb_image, against which the tests check): no gamma
// correction (gAMA/sRGB/iCCP are ignored), 16-bit samples reduced to 8 bits by taking the
// high byte, palettes expanded, tRNS turned into alpha where the output has alpha. RGB/BGR
// outputs drop alpha (no compositing); GRAY from colour uses PIL's (and ITU-R 601's) weights,
// L = (19595 R + 38470 G + 7471 B + 32768) >> 16. Apple's CgBI variant is refused.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct PngInfo {
  int64_t height = 0;
  int64_t width = 0;
  int channels = 0;  // of the decoded data at its own layout: 1 (gray), 2 (gray+alpha),
                     // 3 (RGB, palette without tRNS), 4 (RGBA, or with tRNS)
  int bit_depth = 0;
  bool interlaced = false;
};

struct PngLimits {
  int64_t max_pixels = int64_t(1) << 27;  // refused before the image is allocated
};

// Reads the header (IHDR and the chunks before IDAT). Throws ValueError with libpng's message
// for a malformed stream, or when the image exceeds limits.max_pixels.
PngInfo read_png_header(const uint8_t* data, size_t size, const PngLimits& limits = {});

// Decodes into `out`: height rows of width * output_channels(fmt, info) samples, `row_stride`
// bytes apart. Samples are bytes, except with `keep_16` for a 16-bit PNG: uint16 in host order
// (full precision). Corrupt or truncated data raises ValueError with libpng's message.
void decode_png(const uint8_t* data, size_t size, ColorFormat fmt, uint8_t* out, int64_t row_stride,
                const PngLimits& limits = {}, bool keep_16 = false);

// Channels of the output for a colour format: 3 for RGB/BGR, 1 for GRAY, the file's own for
// ANY_DATA.
int png_output_channels(ColorFormat fmt, const PngInfo& info);

}  // namespace stoker::codecs
