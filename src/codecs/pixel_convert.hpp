// Converting a decoded row (gray, gray+alpha, RGB or RGBA, 8-bit) to an output ColorFormat, for
// the decoders that produce rows in the file's own channels. Alpha is dropped without
// compositing; GRAY from colour uses PIL's (ITU-R 601) weights,
// L = (19595 R + 38470 G + 7471 B + 32768) >> 16; colour from gray repeats the value.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

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

// A 16-bit sample as 8 bits, rounded as DALI does: round(v * 255 / 65535).
inline uint8_t narrow_to_8(uint16_t v) { return uint8_t((uint32_t(v) * 255 + 32767) / 65535); }

// One decoded row of `width` pixels of `channels` samples held in 16 bits, at `bits` (8 or 16)
// of precision, into `out` for `fmt`: 16-bit images converted at full precision, then kept
// (`keep_16`: uint16 output) or narrowed; 8-bit images converted at 8 bits (GRAY as DALI).
// `scratch` is the caller's, reused between rows.
struct RowScratch {
  std::vector<uint16_t> converted;
  std::vector<uint8_t> narrow;
};
inline void store_row(const uint16_t* in, int64_t channels, int bits, ColorFormat fmt,
                      int64_t width, int out_channels, bool keep_16, void* out,
                      RowScratch& scratch) {
  const size_t n_in = size_t(width * channels), n_out = size_t(width * out_channels);
  if (bits == 16) {
    if (keep_16) return convert_row(in, channels, fmt, static_cast<uint16_t*>(out), width);
    scratch.converted.resize(n_out);
    convert_row(in, channels, fmt, scratch.converted.data(), width);
    auto* o = static_cast<uint8_t*>(out);
    for (size_t k = 0; k < n_out; ++k) o[k] = narrow_to_8(scratch.converted[k]);
    return;
  }
  scratch.narrow.resize(n_in);
  for (size_t k = 0; k < n_in; ++k) scratch.narrow[k] = uint8_t(in[k]);
  convert_row(scratch.narrow.data(), channels, fmt, static_cast<uint8_t*>(out), width);
}

}  // namespace stoker::codecs
