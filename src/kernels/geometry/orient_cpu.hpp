// Applies an EXIF orientation (1..8) to an HWC image: the result is the picture as a viewer
// honouring EXIF shows it (PIL's ImageOps.exif_transpose). For out(r, c), with the stored
// image H x W:
//   1 src(r, c)          2 src(r, W-1-c)       3 src(H-1-r, W-1-c)      4 src(H-1-r, c)
//   5 src(c, r)          6 src(H-1-c, r)       7 src(H-1-c, W-1-r)      8 src(c, W-1-r)
// (5-8 swap the axes: the result is W x H.)
#pragma once

#include <cstdint>
#include <cstring>

namespace stoker::kernels {

inline void orient_cpu(const uint8_t* in, int64_t h, int64_t w, int64_t c, int orientation,
                       uint8_t* out) {
  const bool swap = orientation >= 5;
  const int64_t oh = swap ? w : h, ow = swap ? h : w;
  for (int64_t r = 0; r < oh; ++r) {
    for (int64_t x = 0; x < ow; ++x) {
      int64_t sr = r, sc = x;
      switch (orientation) {
        case 2:
          sc = w - 1 - x;
          break;
        case 3:
          sr = h - 1 - r, sc = w - 1 - x;
          break;
        case 4:
          sr = h - 1 - r;
          break;
        case 5:
          sr = x, sc = r;
          break;
        case 6:
          sr = h - 1 - x, sc = r;
          break;
        case 7:
          sr = h - 1 - x, sc = w - 1 - r;
          break;
        case 8:
          sr = x, sc = w - 1 - r;
          break;
        default:
          break;
      }
      std::memcpy(out + (r * ow + x) * c, in + (sr * w + sc) * c, size_t(c));
    }
  }
}

}  // namespace stoker::kernels
