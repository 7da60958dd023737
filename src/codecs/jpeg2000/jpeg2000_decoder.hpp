// JPEG 2000 decoding on the CPU with OpenJPEG: JP2 files and raw J2K codestreams, any number of
// tiles, lossless or lossy, 1 (gray), 2 (gray+alpha), 3 (RGB, or sYCC converted to RGB) or 4
// (RGBA) components of 1 to 16 bits; components subsampled against the image (e.g. 4:2:0 sYCC)
// are upsampled by repetition. A window decodes only the code-blocks it covers
// (opj_set_decode_area).
//
// Conventions (DALI 2.4's CPU decoder, OpenCV's OpenJPEG reader, checked against it in
// python/tests/parity): samples are kept as stored, in 8 bits for precisions up to 8 and in 16
// bits above (a 12-bit image's values stay 0..4095 in a UINT16 output), and 16-bit storage
// becomes 8-bit rounded, round(v * 255 / 65535), as TIFF and PNG; RGB/BGR drop alpha,
// ANY_DATA keeps the components, GRAY from colour uses PIL's weights at the stored precision.
// Signed components, more than 4 components and CMYK/e-YCC images are refused by name.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct Jpeg2000Info {
  int64_t height = 0, width = 0;
  int channels = 0;  // as decoded: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  int bits = 8;      // storage: 8, or 16 for precisions above 8
};

// Whether this build decodes JPEG 2000 (OpenJPEG found at configure time).
bool jpeg2000_available();

// Reads the main header. Throws ValueError for a malformed stream, a kind not read (named) or
// an image above max_pixels, before any tile is decoded.
Jpeg2000Info read_jpeg2000_header(const uint8_t* data, size_t size, int64_t max_pixels);
// 3 for RGB/BGR, 1 for GRAY, info.channels for ANY_DATA.
int jpeg2000_output_channels(ColorFormat fmt, const Jpeg2000Info& info);
// Decodes the image, or `window` of it, into rows of w * jpeg2000_output_channels() samples,
// `row_stride` samples apart: bytes, or with `keep_16` (info.bits == 16) uint16 as stored.
// Corrupt or truncated data raises ValueError with OpenJPEG's message.
void decode_jpeg2000(const uint8_t* data, size_t size, const Jpeg2000Info& info, ColorFormat fmt,
                     void* out, int64_t row_stride, int64_t max_pixels, bool keep_16 = false,
                     const PixelWindow* window = nullptr);

}  // namespace stoker::codecs
