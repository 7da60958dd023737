// Histogram equalization of 8-bit images, each channel of each plane on its own, as DALI's CPU
// operator (OpenCV's equalizeHist): with h the channel's histogram, i its lowest value present
// and N its pixels, lut[v] = cvRound(float(h[i+1] + ... + h[v]) * (255.f / float(N - h[i])))
// (lut[i] = 0); a channel of a single value keeps it. Float arithmetic and half-to-even rounding
// as OpenCV's, so that the results are DALI's bit for bit.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

// A sample as planes (leading channel extents: CHW) of `pixels` pixels of `channels`
// interleaved channels (HWC); every (plane, channel) is equalized on its own.
struct EqualizeShape {
  int64_t planes = 1;
  int64_t pixels = 0;
  int64_t channels = 1;
};

// The look-up table of one channel from its histogram (`total` pixels, > 0). Shared by the CPU
// kernel and the GPU one.
STOKER_HOST_DEVICE inline void equalize_lut(const uint32_t* hist, int64_t total, uint8_t* lut) {
  int i = 0;
  while (i < 255 && hist[i] == 0) ++i;
  if (int64_t(hist[i]) == total) {  // one value: kept (OpenCV's setTo(i))
    for (int v = 0; v < 256; ++v) lut[v] = uint8_t(i);
    return;
  }
  // OpenCV's int total and sum, converted to float for the products.
  const float scale = 255.f / float(int32_t(total - int64_t(hist[i])));
  for (int v = 0; v <= i; ++v) lut[v] = 0;
  int32_t sum = 0;
  for (int v = i + 1; v < 256; ++v) {
    sum += int32_t(hist[v]);
    const float x = mul_rn(float(sum), scale);
    // cvRound (half to even) saturated to 0..255, through 1.5 * 2^23 (x is far below 2^22).
    const float r = add_rn(add_rn(x, 12582912.f), -12582912.f);
    lut[v] = uint8_t(r <= 0.f ? 0 : r >= 255.f ? 255 : int(r));
  }
}

// One sample on the CPU.
inline void equalize_cpu(const uint8_t* in, uint8_t* out, const EqualizeShape& s) {
  if (s.pixels == 0 || s.channels == 0) return;
  const int64_t C = s.channels;
  uint32_t hist[256];
  uint8_t lut[256];
  for (int64_t p = 0; p < s.planes; ++p) {
    const uint8_t* src = in + p * s.pixels * C;
    uint8_t* dst = out + p * s.pixels * C;
    for (int64_t c = 0; c < C; ++c) {
      for (auto& h : hist) h = 0;
      for (int64_t k = 0; k < s.pixels; ++k) ++hist[src[k * C + c]];
      equalize_lut(hist, s.pixels, lut);
      for (int64_t k = 0; k < s.pixels; ++k) dst[k * C + c] = lut[src[k * C + c]];
    }
  }
}

}  // namespace stoker::kernels
