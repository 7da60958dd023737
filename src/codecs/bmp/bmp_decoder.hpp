// Windows BMP, parsed here (no maintained library decodes BMP alone; OpenCV and PIL carry their
// own readers): OS/2 core and Windows INFO/V2-V5 headers, 1/4/8-bit palettes, 16-bit (5-5-5 or
// bit fields), 24-bit, 32-bit (BGRX, or bit fields with alpha), RLE8 and RLE4, bottom-up and
// top-down rows.
//
// Conventions (PIL's): palette images become RGB; 32-bit images have alpha only when a bit
// field says so (ANY_DATA then gives 4 channels); n-bit fields are scaled to 8 bits as
// round(v * 255 / (2^n - 1)); pixels an RLE bitmap skips are black.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct BmpInfo {
  int64_t height = 0, width = 0;
  int channels = 0;  // 3, or 4 with an alpha field
  bool top_down = false;
  int bits = 0;
  uint32_t compression = 0;
  size_t header_end = 0;  // where the palette (or masks after a 40-byte header) starts
  size_t data_offset = 0;
  uint32_t palette_size = 0;
  int palette_entry = 4;             // bytes per palette entry (3 for OS/2 core headers)
  uint32_t masks[4] = {0, 0, 0, 0};  // R, G, B, A for 16/32-bit images
};

// Throws ValueError for malformed headers, unsupported variants and images above max_pixels.
BmpInfo read_bmp_header(const uint8_t* data, size_t size, int64_t max_pixels);
int bmp_output_channels(ColorFormat fmt, const BmpInfo& info);
// Decodes into height rows of width * bmp_output_channels() bytes, `row_stride` apart.
void decode_bmp(const uint8_t* data, size_t size, const BmpInfo& info, ColorFormat fmt,
                uint8_t* out, int64_t row_stride);

}  // namespace stoker::codecs
