// Separable resize of an HWC image on the CPU (filters and conventions: resample_weights.hpp).
// Two passes: horizontal into float scratch, then vertical into the output, rounded and
// saturated to the output type.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/common/image_view.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"

namespace stoker::kernels {

namespace resize_detail {
// The common case's hot loops (resize_cpu_rows.cpp: SSE2, or AVX2 where the CPU has it), giving
// the same floats as the generic loops below.
// The horizontal pass of 8-bit RGB: rgb8_scratch_floats() floats of scratch that
// prepare_rgb8() fills once per image (a table of the weights, padding), then one call per
// source row of `width` pixels (it may write one float past dst's wx.out_size pixels).
int64_t rgb8_scratch_floats(const ResampleWeights& wx, int64_t width);
void prepare_rgb8(const ResampleWeights& wx, int64_t width, float* scratch);
void horizontal_rgb8(const uint8_t* src, int64_t width, float* dst, const ResampleWeights& wx,
                     float* scratch);
// acc[i] = sum over k < n of w[k] * src[k * stride + i], for i < len.
void vertical(const float* src, int64_t stride, const float* w, int n, float* acc, int64_t len);
// convert_sat<uint8_t> over a row.
void round_sat_u8(const float* src, uint8_t* dst, int64_t n);
// Tests: allow (where the CPU has it) or forbid the AVX2 loops, so that the SSE2 ones are
// checked too; returns the previous setting. Not for use while resizes run.
bool allow_avx2(bool allow);
}  // namespace resize_detail

// A sampling region of the input in pixel coordinates ([y0, y1) x [x0, x1), fractional
// allowed, y0 > y1 or x0 > x1 flips): see resample_weights.
struct ResizeRoi {
  double y0, y1, x0, x1;
};

// Resamples region `roi` of `in` (any window) to `out`'s extents, each axis with the filter
// `filter` gives it (shrinking or not). Requires in.channels == out.channels > 0. `scratch` is
// grown as needed and may be reused across calls (no other allocation).
template <typename Out, typename In>
void resize_cpu(ImageView<Out> out, ImageView<const In> in, ResizeFilters filter, bool antialias,
                std::vector<float>& scratch, const ResizeRoi& roi) {
  STOKER_ASSERT(in.channels == out.channels && in.channels > 0);
  const int64_t C = in.channels;
  const Filter fx = filter.for_axis(std::abs(roi.x1 - roi.x0), out.width);
  const Filter fy = filter.for_axis(std::abs(roi.y1 - roi.y0), out.height);
  auto [sy, sx] = fx == Filter::kNearest && fy == Filter::kNearest
                      ? nn_origin_shift(in.height, in.width, out.height, out.width, roi.y0, roi.y1,
                                        roi.x0, roi.x1)
                      : std::pair<int64_t, int64_t>{0, 0};
  auto wx = resample_weights(in.width, out.width, fx, antialias, roi.x0, roi.x1, false, sx);
  auto wy = resample_weights(in.height, out.height, fy, antialias, roi.y0, roi.y1, true, sy);
  // Only the source rows some output row reads go through the horizontal pass.
  int64_t row_lo = in.height, row_hi = 0;
  for (int64_t y = 0; y < out.height; ++y) {
    row_lo = std::min(row_lo, wy.first[size_t(y)]);
    row_hi = std::max(row_hi, wy.first[size_t(y)] + wy.count[size_t(y)]);
  }
  const int64_t rows = row_hi - row_lo;
  const int64_t row_len = out.width * C;
  // Layout: [horizontally resampled rows (rows x row_len)] [one accumulator row] (which also
  // takes the float horizontal_rgb8 may write past the last row) [horizontal_rgb8's scratch].
  const bool rgb8 = C == 3 && std::is_same_v<In, uint8_t>;
  scratch.resize(
      size_t((rows + 1) * row_len + (rgb8 ? resize_detail::rgb8_scratch_floats(wx, in.width) : 0)));
  float* acc = &scratch[size_t(rows * row_len)];
  // Horizontal pass: every source row -> out.width pixels. The channel count is a template
  // constant for 1, 3 and 4 channels, so the per-tap channel loop unrolls.
  auto horizontal = [&](auto channels) {
    constexpr int64_t kC = decltype(channels)::value;
    const int64_t c = kC > 0 ? kC : C;
    for (int64_t y = row_lo; y < row_hi; ++y) {
      const In* src = in.row(y);
      float* dst = &scratch[size_t((y - row_lo) * out.width * c)];
      for (int64_t x = 0; x < out.width; ++x) {
        const float* w = &wx.weights[size_t(x) * size_t(wx.support)];
        const In* s = src + wx.first[size_t(x)] * c;
        float a[kC > 0 ? kC : 1] = {};
        if constexpr (kC > 0) {
          for (int k = 0, n = wx.count[size_t(x)]; k < n; ++k)
            for (int64_t ch = 0; ch < kC; ++ch) a[ch] += w[k] * to_float(s[k * kC + ch]);
          for (int64_t ch = 0; ch < kC; ++ch) dst[x * kC + ch] = a[ch];
        } else {
          for (int64_t ch = 0; ch < c; ++ch) {
            float acc = 0.f;
            for (int k = 0, n = wx.count[size_t(x)]; k < n; ++k)
              acc += w[k] * to_float(s[k * c + ch]);
            dst[x * c + ch] = acc;
          }
        }
      }
    }
  };
  if (rgb8) {
    resize_detail::prepare_rgb8(wx, in.width, acc + row_len);
    for (int64_t y = row_lo; y < row_hi; ++y)
      resize_detail::horizontal_rgb8(reinterpret_cast<const uint8_t*>(in.row(y)), in.width,
                                     &scratch[size_t((y - row_lo) * row_len)], wx, acc + row_len);
  } else if (C == 3)
    horizontal(std::integral_constant<int64_t, 3>{});
  else if (C == 1)
    horizontal(std::integral_constant<int64_t, 1>{});
  else if (C == 4)
    horizontal(std::integral_constant<int64_t, 4>{});
  else
    horizontal(std::integral_constant<int64_t, 0>{});
  // Vertical pass.
  for (int64_t y = 0; y < out.height; ++y) {
    resize_detail::vertical(&scratch[size_t((wy.first[size_t(y)] - row_lo) * row_len)], row_len,
                            &wy.weights[size_t(y) * size_t(wy.support)], wy.count[size_t(y)], acc,
                            row_len);
    Out* dst = out.row(y);
    if constexpr (std::is_same_v<Out, uint8_t>)
      resize_detail::round_sat_u8(acc, dst, row_len);
    else
      for (int64_t i = 0; i < row_len; ++i) dst[i] = convert_sat<Out>(acc[i]);
  }
}

// Resamples the whole of `in`.
template <typename Out, typename In>
void resize_cpu(ImageView<Out> out, ImageView<const In> in, ResizeFilters filter, bool antialias,
                std::vector<float>& scratch) {
  resize_cpu(out, in, filter, antialias, scratch,
             ResizeRoi{0.0, double(in.height), 0.0, double(in.width)});
}

template <typename Out, typename In>
void resize_linear_cpu(ImageView<Out> out, ImageView<const In> in, bool antialias,
                       std::vector<float>& scratch) {
  resize_cpu(out, in, Filter::kLinear, antialias, scratch);
}

}  // namespace stoker::kernels
