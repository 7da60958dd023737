// WebP decoding on the CPU with libwebp: lossy (VP8) and lossless (VP8L), with or without
// alpha; of an animation, its first frame as composed on the canvas (libwebpdemux), as DALI.
//
// Conventions (DALI 2.4's, checked against it in python/tests/parity): RGB/BGR outputs drop
// alpha (no compositing), ANY_DATA gives RGBA when the file has alpha and RGB otherwise (WebP
// stores no gray), GRAY uses PIL's (ITU-R 601) weights as the other formats do. Lossy images
// are upsampled from 4:2:0 with libwebp's default ("fancy") filter.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct WebpInfo {
  int64_t height = 0, width = 0;
  bool alpha = false;
  bool lossless = false;
  bool animated = false;  // decode_webp() gives the first frame
};

// Whether this build decodes WebP (libwebp found at configure time).
bool webp_available();

// Reads the headers. Throws ValueError for a malformed stream or an image (an animation's
// canvas) above max_pixels, before anything is allocated.
WebpInfo read_webp_header(const uint8_t* data, size_t size, int64_t max_pixels);
// 3 for RGB/BGR, 1 for GRAY; for ANY_DATA, 4 with alpha and 3 without.
int webp_output_channels(ColorFormat fmt, const WebpInfo& info);
// Decodes the image, or `window` of it (libwebp's cropping: rows below and macroblocks right of
// it are not decoded), into rows of w * webp_output_channels() bytes, `row_stride` apart.
// Corrupt or truncated data raises ValueError.
void decode_webp(const uint8_t* data, size_t size, const WebpInfo& info, ColorFormat fmt,
                 uint8_t* out, int64_t row_stride, const PixelWindow* window = nullptr);

}  // namespace stoker::codecs
