// Whole-pixel writes of HWC images (erase and paste on the CPU; on the GPU both are strided
// copies, kernels/tensor/copy_gpu): filling a rectangle with one pixel value, and placing an
// image on a canvas filled with one.
#pragma once

#include <cstdint>
#include <cstring>

namespace stoker::kernels {

// Rows [y0, y1) and columns [x0, x1) of an image `width` pixels wide (of `pixel_bytes` each)
// become `pixel`.
inline void fill_rect_cpu(void* image, int64_t width, size_t pixel_bytes, int64_t y0, int64_t y1,
                          int64_t x0, int64_t x1, const void* pixel) {
  auto* data = static_cast<uint8_t*>(image);
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x)
      std::memcpy(data + size_t(y * width + x) * pixel_bytes, pixel, pixel_bytes);
}

// A canvas of ch x cw pixels filled with `fill`, with the h x w image `src` at (y0, x0) (inside
// the canvas).
inline void paste_cpu(void* canvas, int64_t ch, int64_t cw, const void* src, int64_t h, int64_t w,
                      size_t pixel_bytes, int64_t y0, int64_t x0, const void* fill) {
  fill_rect_cpu(canvas, cw, pixel_bytes, 0, ch, 0, cw, fill);
  auto* dst = static_cast<uint8_t*>(canvas);
  const auto* s = static_cast<const uint8_t*>(src);
  for (int64_t y = 0; y < h; ++y)
    std::memcpy(dst + size_t((y0 + y) * cw + x0) * pixel_bytes, s + size_t(y * w) * pixel_bytes,
                size_t(w) * pixel_bytes);
}

}  // namespace stoker::kernels
