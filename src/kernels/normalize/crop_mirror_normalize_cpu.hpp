// Crop + mirror + normalize + layout (HWC or CHW) + cast in one pass over an HWC window:
//   out[c] = (in[c] - mean[c]) / std[c] * scale + shift
// computed in float as (in - mean) * (scale / std) + shift, then converted (RNE for f16,
// round-half-away and saturate for integers). Channels beyond the input's (pad_output) are 0.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/common/image_view.hpp"

namespace stoker::kernels {

struct NormalizeParams {
  std::vector<float> mean;     // one per input channel
  std::vector<float> inv_std;  // scale / std, one per input channel
  float shift = 0.f;
  bool mirror = false;       // flip horizontally
  bool planar = false;       // CHW output (else HWC)
  int64_t out_channels = 0;  // >= in.channels; extra channels are filled with 0
};

namespace detail {
// n floats to Out: halves in bulk (F16C where the CPU has it), the rest element by element.
template <typename Out>
void store_row(const float* src, Out* dst, int64_t n) {
  if constexpr (std::is_same_v<Out, float>) {
    std::copy(src, src + n, dst);
  } else if constexpr (std::is_same_v<Out, float16>) {
    floats_to_halves(src, dst, size_t(n));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = convert_sat<Out>(src[i]);
  }
}

// Planar float16 or float output of one 8-bit RGB row of W pixels (AVX2 and F16C where the CPU
// has them, crop_mirror_normalize_cpu_rows.cpp): writes outputs [0, n) of each channel's row
// dst[c] and returns n (0 without those instructions), the same values as the loops below.
template <typename Out>
int64_t normalize_rgb8_planar_row(const uint8_t* src, int64_t W, bool mirror, const float* mean,
                                  const float* inv, float shift, Out* const dst[3]);
}  // namespace detail

// `out` holds out_channels * in.height * in.width elements, dense. Row by row: each channel's
// values go to a float row buffer with unit stride (the compiler vectorises it), then to the
// output in one conversion per row (planar: per channel row).
template <typename Out, typename In>
void crop_mirror_normalize_cpu(Out* out, ImageView<const In> in, const NormalizeParams& p) {
  const int64_t H = in.height, W = in.width, C = in.channels, OC = p.out_channels;
  STOKER_ASSERT(OC >= C && int64_t(p.mean.size()) == C && int64_t(p.inv_std.size()) == C);
  if constexpr (std::is_same_v<In, uint8_t> &&
                (std::is_same_v<Out, float16> || std::is_same_v<Out, float>)) {
    // The ImageNet case (8-bit RGB to planar halves or floats): vectorised rows, the rest of
    // each row done here, padded channels' rows set to 0.
    if (p.planar && C == 3) {
      for (int64_t y = 0; y < H; ++y) {
        const uint8_t* row = in.row(y);
        Out* const dst[3] = {out + y * W, out + (H + y) * W, out + (2 * H + y) * W};
        for (int64_t x = detail::normalize_rgb8_planar_row(row, W, p.mirror, p.mean.data(),
                                                           p.inv_std.data(), p.shift, dst);
             x < W; ++x)
          for (int64_t c = 0; c < 3; ++c)
            dst[c][x] =
                Out((to_float(row[(p.mirror ? W - 1 - x : x) * 3 + c]) - p.mean[size_t(c)]) *
                        p.inv_std[size_t(c)] +
                    p.shift);
        for (int64_t c = 3; c < OC; ++c) std::fill_n(out + (c * H + y) * W, W, Out(0.f));
      }
      return;
    }
  }
  std::vector<float> row_buf(size_t(W * OC), 0.f);  // padded channels stay 0
  float* buf = row_buf.data();
  for (int64_t y = 0; y < H; ++y) {
    const In* row = in.row(y);
    for (int64_t c = 0; c < C; ++c) {
      const float mean = p.mean[size_t(c)], inv = p.inv_std[size_t(c)], shift = p.shift;
      const In* src = row + c;
      if (p.planar) {
        float* dst = buf + c * W;
        if (p.mirror) {
          for (int64_t x = 0; x < W; ++x)
            dst[x] = (to_float(src[(W - 1 - x) * C]) - mean) * inv + shift;
        } else {
          for (int64_t x = 0; x < W; ++x) dst[x] = (to_float(src[x * C]) - mean) * inv + shift;
        }
      } else {
        float* dst = buf + c;
        if (p.mirror) {
          for (int64_t x = 0; x < W; ++x)
            dst[x * OC] = (to_float(src[(W - 1 - x) * C]) - mean) * inv + shift;
        } else {
          for (int64_t x = 0; x < W; ++x) dst[x * OC] = (to_float(src[x * C]) - mean) * inv + shift;
        }
      }
    }
    if (p.planar) {
      for (int64_t c = 0; c < OC; ++c) detail::store_row(buf + c * W, out + (c * H + y) * W, W);
    } else {
      detail::store_row(buf, out + y * W * OC, W * OC);
    }
  }
}

}  // namespace stoker::kernels
