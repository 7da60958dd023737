// Separable resize of an HWC image on the CPU (filters and conventions: resample_weights.hpp).
// Two passes: horizontal into float scratch, then vertical into the output, rounded and
// saturated to the output type.
#pragma once

#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/common/image_view.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"

namespace stoker::kernels {

// Resizes `in` (any window) to `out`'s extents. Requires in.channels == out.channels > 0.
// `scratch` is grown as needed and may be reused across calls (no other allocation).
template <typename Out, typename In>
void resize_cpu(ImageView<Out> out, ImageView<const In> in, Filter filter, bool antialias,
                std::vector<float>& scratch) {
  STOKER_ASSERT(in.channels == out.channels && in.channels > 0);
  const int64_t C = in.channels;
  auto wx = resample_weights(in.width, out.width, filter, antialias);
  auto wy = resample_weights(in.height, out.height, filter, antialias);
  const int64_t row_len = out.width * C;
  // Layout: [horizontally resampled rows (in.height x row_len)] [one accumulator row].
  scratch.resize(size_t((in.height + 1) * row_len));
  float* acc = &scratch[size_t(in.height * row_len)];
  // Horizontal pass: every source row -> out.width pixels.
  for (int64_t y = 0; y < in.height; ++y) {
    const In* src = in.row(y);
    float* dst = &scratch[size_t(y * out.width * C)];
    for (int64_t x = 0; x < out.width; ++x) {
      const float* w = &wx.weights[size_t(x) * size_t(wx.support)];
      const In* s = src + wx.first[size_t(x)] * C;
      for (int64_t c = 0; c < C; ++c) {
        float acc = 0.f;
        for (int k = 0; k < wx.support; ++k) {
          if (w[k] != 0.f) acc += w[k] * to_float(s[k * C + c]);
        }
        dst[x * C + c] = acc;
      }
    }
  }
  // Vertical pass.
  for (int64_t y = 0; y < out.height; ++y) {
    std::fill(acc, acc + row_len, 0.f);
    const float* w = &wy.weights[size_t(y) * size_t(wy.support)];
    for (int k = 0; k < wy.support; ++k) {
      if (w[k] == 0.f) continue;
      const float* src = &scratch[size_t((wy.first[size_t(y)] + k) * row_len)];
      for (int64_t i = 0; i < row_len; ++i) acc[i] += w[k] * src[i];
    }
    Out* dst = out.row(y);
    for (int64_t i = 0; i < row_len; ++i) dst[i] = convert_sat<Out>(acc[i]);
  }
}

template <typename Out, typename In>
void resize_linear_cpu(ImageView<Out> out, ImageView<const In> in, bool antialias,
                       std::vector<float>& scratch) {
  resize_cpu(out, in, Filter::kLinear, antialias, scratch);
}

}  // namespace stoker::kernels
