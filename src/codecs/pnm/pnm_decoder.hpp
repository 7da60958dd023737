// Netpbm images (PBM/PGM/PPM, ASCII P1-P3 and binary P4-P6), parsed here: the format is a few
// lines of header and raw samples, and no maintained library is made for decoding it alone.
//
// Conventions: PBM 1 is black (0) and 0 white (255); samples are scaled to 8 bits as
// round(v * 255 / maxval) (identity for maxval 255; 16-bit samples are big-endian); GRAY from
// PPM uses PIL's weights, RGB from PGM/PBM repeats the gray value.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct PnmInfo {
  int64_t height = 0, width = 0;
  int channels = 0;  // 1 (PBM, PGM) or 3 (PPM)
  int maxval = 0;    // 1 for PBM
  char kind = 0;     // '1'..'6'
  size_t data_offset = 0;
};

// Throws ValueError for malformed headers and images above max_pixels.
PnmInfo read_pnm_header(const uint8_t* data, size_t size, int64_t max_pixels);
int pnm_output_channels(ColorFormat fmt, const PnmInfo& info);
// Decodes into height rows of width * pnm_output_channels() bytes, `row_stride` apart.
// Truncated data, bad ASCII samples and samples above maxval raise ValueError.
void decode_pnm(const uint8_t* data, size_t size, const PnmInfo& info, ColorFormat fmt,
                uint8_t* out, int64_t row_stride);

}  // namespace stoker::codecs
