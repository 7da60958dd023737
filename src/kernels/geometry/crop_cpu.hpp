// Copies the window [y0, y0 + out.height) x [x0, x0 + out.width) of `in` to `out`; parts of the
// window outside `in` are filled with `fill[c]` (pad policy). y0 and x0 may be negative.
#pragma once

#include <algorithm>
#include <vector>

#include "stoker/kernels/common/image_view.hpp"

namespace stoker::kernels {

template <typename T>
void crop_cpu(ImageView<T> out, ImageView<const T> in, int64_t y0, int64_t x0,
              const std::vector<T>& fill) {
  const int64_t C = in.channels;
  for (int64_t y = 0; y < out.height; ++y) {
    T* dst = out.row(y);
    int64_t sy = y0 + y;
    int64_t xa = std::clamp<int64_t>(-x0, 0, out.width);             // first inside column
    int64_t xb = std::clamp<int64_t>(in.width - x0, xa, out.width);  // one past last inside
    bool row_inside = sy >= 0 && sy < in.height;
    if (!row_inside) xb = xa = out.width;
    for (int64_t x = 0; x < xa; ++x)
      for (int64_t c = 0; c < C; ++c) dst[x * C + c] = fill[size_t(c)];
    if (xb > xa) std::copy(in.row(sy) + (x0 + xa) * C, in.row(sy) + (x0 + xb) * C, dst + xa * C);
    for (int64_t x = std::max(xb, int64_t(0)); x < out.width; ++x)
      for (int64_t c = 0; c < C; ++c) dst[x * C + c] = fill[size_t(c)];
  }
}

}  // namespace stoker::kernels
