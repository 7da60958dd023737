// Demosaicing of Bayer-pattern sensor images (DALI's fn.debayer), as OpenCV's cv::demosaicing,
// which DALI's CPU operator calls, computes it:
// * bilinear: every missing colour the rounded mean of the pixels of that colour in the 3x3
//   neighbourhood (two of them: (a + b + 1) >> 1; four: (a + b + c + d + 2) >> 2);
// * gray: the luma of those means, 0.299 R + 0.587 G + 0.114 B in OpenCV's 14-bit fixed point.
// OpenCV computes the inner pixels this way and copies the borders: the first and last columns
// from their neighbours, then the first and last rows likewise; an image of height or width 2
// has no inner pixels (stoker writes zeros; OpenCV leaves some of its bytes unwritten). The
// per-pixel functions are shared by the CPU kernel and the GPU one, so both are exact.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

// DALI's patterns: 2 * y + x of the blue pixel in the 2x2 tile that starts at the sensor's
// second row and column (OpenCV's convention): BG(GR), GB(RG), GR(BG), RG(GB).
enum class BayerPattern : int { kBG = 0, kGB = 1, kGR = 2, kRG = 3 };

enum class DebayerAlgorithm : int { kBilinear = 0, kGray = 1 };

struct DebayerShape {
  int64_t height = 0, width = 0;
};

// The colour of sensor pixel (y, x): 0 red, 1 green, 2 blue.
STOKER_HOST_DEVICE inline int bayer_colour(int pattern, int64_t y, int64_t x) {
  const int blue_y = (1 + (pattern >> 1)) & 1, blue_x = (1 + (pattern & 1)) & 1;
  const bool row = int(y & 1) == blue_y, col = int(x & 1) == blue_x;
  return row && col ? 2 : (!row && !col ? 0 : 1);
}

// The sums and counts of each colour around inner pixel (y, x) (1 <= y < H - 1, 1 <= x < W - 1);
// the centre counts alone for its own colour.
template <typename T>
STOKER_HOST_DEVICE inline void bayer_sums(const T* in, int64_t W, int pattern, int64_t y, int64_t x,
                                          int32_t sum[3], int32_t count[3]) {
  const int own = bayer_colour(pattern, y, x);
  for (int c = 0; c < 3; ++c) sum[c] = 0, count[c] = 0;
  sum[own] = in[y * W + x], count[own] = 1;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int c = bayer_colour(pattern, y + dy, x + dx);
      if (c == own) continue;
      sum[c] += in[(y + dy) * W + x + dx], ++count[c];
    }
}

// Output pixel (y, x) of a sample: `out` gets 3 values (bilinear, RGB) or 1 (gray).
template <typename T>
STOKER_HOST_DEVICE inline void debayer_pixel(const T* in, DebayerShape s, int pattern,
                                             DebayerAlgorithm alg, int64_t y, int64_t x, T* out) {
  const int ch = alg == DebayerAlgorithm::kGray ? 1 : 3;
  if (s.height <= 2 || s.width <= 2) {
    for (int c = 0; c < ch; ++c) out[c] = T(0);
    return;
  }
  // Borders repeat the nearest inner pixel.
  y = y < 1 ? 1 : (y > s.height - 2 ? s.height - 2 : y);
  x = x < 1 ? 1 : (x > s.width - 2 ? s.width - 2 : x);
  int32_t sum[3], count[3];
  bayer_sums(in, s.width, pattern, y, x, sum, count);
  if (alg == DebayerAlgorithm::kBilinear) {
    for (int c = 0; c < 3; ++c)
      out[c] = T(count[c] == 1 ? sum[c] : count[c] == 2 ? (sum[c] + 1) >> 1 : (sum[c] + 2) >> 2);
    return;
  }
  // OpenCV's Bayer2Gray: weights R2Y = 4899, G2Y = 9617, B2Y = 1868 (<< 14), each colour's sum
  // scaled to the centre's count (x2 around green, x4 around red and blue) and descaled once.
  const int shift = count[1] == 1 ? 15 : 16;  // green centre: means of 2; else of 4
  const int64_t m = count[1] == 1 ? 2 : 4;
  const int64_t coef[3] = {4899, 9617, 1868};
  int64_t acc = 0;
  for (int c = 0; c < 3; ++c) acc += int64_t(sum[c]) * coef[c] * (m / count[c]);
  out[0] = T((acc + (int64_t(1) << (shift - 1))) >> shift);
}

// One sample (H x W sensor values) on the CPU: H x W x 3 (bilinear) or H x W x 1 (gray).
template <typename T>
void debayer_cpu(const T* in, T* out, DebayerShape s, int pattern, DebayerAlgorithm alg) {
  const int ch = alg == DebayerAlgorithm::kGray ? 1 : 3;
  for (int64_t y = 0; y < s.height; ++y)
    for (int64_t x = 0; x < s.width; ++x)
      debayer_pixel(in, s, pattern, alg, y, x, out + (y * s.width + x) * ch);
}

}  // namespace stoker::kernels
