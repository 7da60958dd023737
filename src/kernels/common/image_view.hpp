// ImageView: an interleaved (HWC) image or a window of one: pointer, extents and row stride,
// so a crop is a view with an offset pointer and no copy.
#pragma once

#include <cstdint>

namespace stoker::kernels {

template <typename T>
struct ImageView {
  T* data = nullptr;
  int64_t height = 0;
  int64_t width = 0;
  int64_t channels = 0;
  int64_t row_stride = 0;  // elements between the starts of consecutive rows

  T* row(int64_t y) const { return data + y * row_stride; }
  T& at(int64_t y, int64_t x, int64_t c) const { return data[y * row_stride + x * channels + c]; }
  // The window [y0, y0 + h) x [x0, x0 + w); must lie inside this view.
  ImageView window(int64_t y0, int64_t x0, int64_t h, int64_t w) const {
    return {data + y0 * row_stride + x0 * channels, h, w, channels, row_stride};
  }
  operator ImageView<const T>() const { return {data, height, width, channels, row_stride}; }
};

template <typename T>
ImageView<T> dense_image(T* data, int64_t h, int64_t w, int64_t c) {
  return {data, h, w, c, w * c};
}

}  // namespace stoker::kernels
