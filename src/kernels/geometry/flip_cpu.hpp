// Horizontal and/or vertical flip of an HWC image (a CHW image is flipped as C one-channel
// images by the caller).
#pragma once

#include <algorithm>

#include "stoker/kernels/common/image_view.hpp"

namespace stoker::kernels {

template <typename T>
void flip_cpu(ImageView<T> out, ImageView<const T> in, bool horizontal, bool vertical) {
  const int64_t H = in.height, W = in.width, C = in.channels;
  for (int64_t y = 0; y < H; ++y) {
    const T* src = in.row(vertical ? H - 1 - y : y);
    T* dst = out.row(y);
    if (!horizontal) {
      std::copy(src, src + W * C, dst);
      continue;
    }
    for (int64_t x = 0; x < W; ++x) {
      std::copy(src + (W - 1 - x) * C, src + (W - x) * C, dst + x * C);
    }
  }
}

}  // namespace stoker::kernels
