#include "stoker/kernels/color/jpeg_distortion.hpp"

#include <algorithm>
#include <cmath>

namespace stoker::kernels {
namespace {

// ITU-T T.81 Annex K, tables K.1 (luminance) and K.2 (chrominance).
// 8 x 8, row = vertical frequency.
// clang-format off
constexpr uint8_t kLuma[64] = {
    16, 11, 10, 16,  24,  40,  51,  61,
    12, 12, 14, 19,  26,  58,  60,  55,
    14, 13, 16, 24,  40,  57,  69,  56,
    14, 17, 22, 29,  51,  87,  80,  62,
    18, 22, 37, 56,  68, 109, 103,  77,
    24, 35, 55, 64,  81, 104, 113,  92,
    49, 64, 78, 87, 103, 121, 120, 101,
    72, 92, 95, 98, 112, 100, 103,  99};
constexpr uint8_t kChroma[64] = {
    17, 18, 24, 47, 99, 99, 99, 99,
    18, 21, 26, 66, 99, 99, 99, 99,
    24, 26, 56, 99, 99, 99, 99, 99,
    47, 66, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99};
// clang-format on

}  // namespace

JpegDistortionTables jpeg_distortion_tables(int quality) {
  quality = std::clamp(quality, 1, 100);
  const float scale = quality < 50 ? 50.0f / float(quality) : 2.0f - float(2 * quality) / 100.0f;
  JpegDistortionTables t;
  for (int k = 0; k < 64; ++k) {
    const auto scaled = [&](uint8_t v) {
      const float r = std::round(scale * float(v));
      return uint8_t(std::clamp(r, 1.0f, 255.0f));
    };
    t.luma[k] = scaled(kLuma[k]);
    t.chroma[k] = scaled(kChroma[k]);
  }
  return t;
}

void jpeg_distortion_reference(const uint8_t* in, uint8_t* out, int64_t h, int64_t w,
                               const JpegDistortionTables& tables) {
  namespace jd = jpeg_distortion;
  jd::Mcu m;
  for (int64_t y0 = 0; y0 < h; y0 += 16) {
    for (int64_t x0 = 0; x0 < w; x0 += 16) {
      for (int g = 0; g < 64; ++g) jd::load_group(in, h, w, x0, y0, g % 8, g / 8, m);
      for (int b = 0; b < 6; ++b) {
        for (int r = 0; r < 8; ++r) jd::dct_forward(&m[b][r][0], 1);
        for (int c = 0; c < 8; ++c) jd::dct_forward(&m[b][0][c], 9);
        const uint8_t* q = b < 4 ? tables.luma : tables.chroma;
        for (int k = 0; k < 64; ++k) m[b][k / 8][k % 8] = jd::quantize(m[b][k / 8][k % 8], q[k]);
        for (int c = 0; c < 8; ++c) jd::dct_inverse(&m[b][0][c], 9);
        for (int r = 0; r < 8; ++r) jd::dct_inverse(&m[b][r][0], 1);
      }
      for (int g = 0; g < 64; ++g) jd::store_group(m, h, w, x0, y0, g % 8, g / 8, out);
    }
  }
}

}  // namespace stoker::kernels
