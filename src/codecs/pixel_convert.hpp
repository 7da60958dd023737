// Converting a decoded row (gray, gray+alpha, RGB or RGBA, 8-bit) to an output ColorFormat, for
// the decoders that produce rows in the file's own channels. Alpha is dropped without
// compositing; GRAY from colour uses PIL's (ITU-R 601) weights,
// L = (19595 R + 38470 G + 7471 B + 32768) >> 16; colour from gray repeats the value.
#pragma once

#include <cstdint>
#include <cstring>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

// For 8- or 16-bit samples (the weights sum to 65536, so the result stays in range).
template <typename T>
inline T luma(T r, T g, T b) {
  return T((19595ull * r + 38470ull * g + 7471ull * b + 0x8000ull) >> 16);
}

// `in` holds `width` pixels of `in_channels` (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) of 8-bit
// (uint8_t) or 16-bit (uint16_t) samples.
template <typename T>
inline void convert_row(const T* in, int64_t in_channels, ColorFormat fmt, T* out, int64_t width) {
  const int64_t c = in_channels;
  if (fmt == ColorFormat::kAnyData) {
    std::memcpy(out, in, size_t(width * c) * sizeof(T));
    return;
  }
  for (int64_t x = 0; x < width; ++x, in += c) {
    const bool gray = c <= 2;
    const T r = in[0], g = gray ? in[0] : in[1], b = gray ? in[0] : in[2];
    switch (fmt) {
      case ColorFormat::kGray:
        out[x] = gray ? r : luma(r, g, b);
        break;
      case ColorFormat::kBGR:
        out[3 * x] = b, out[3 * x + 1] = g, out[3 * x + 2] = r;
        break;
      default:
        out[3 * x] = r, out[3 * x + 1] = g, out[3 * x + 2] = b;
        break;
    }
  }
}

}  // namespace stoker::codecs
