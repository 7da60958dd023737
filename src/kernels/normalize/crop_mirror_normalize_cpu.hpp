// Crop + mirror + normalize + layout (HWC or CHW) + cast in one pass over an HWC window:
//   out[c] = (in[c] - mean[c]) / std[c] * scale + shift
// computed in float as (in - mean) * (scale / std) + shift, then converted (RNE for f16,
// round-half-away and saturate for integers). Channels beyond the input's (pad_output) are 0.
#pragma once

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

// `out` holds out_channels * in.height * in.width elements, dense.
template <typename Out, typename In>
void crop_mirror_normalize_cpu(Out* out, ImageView<const In> in, const NormalizeParams& p) {
  const int64_t H = in.height, W = in.width, C = in.channels, OC = p.out_channels;
  STOKER_ASSERT(OC >= C && int64_t(p.mean.size()) == C && int64_t(p.inv_std.size()) == C);
  for (int64_t y = 0; y < H; ++y) {
    const In* row = in.row(y);
    for (int64_t x = 0; x < W; ++x) {
      const In* px = row + (p.mirror ? W - 1 - x : x) * C;
      for (int64_t c = 0; c < OC; ++c) {
        float v =
            c < C ? (to_float(px[c]) - p.mean[size_t(c)]) * p.inv_std[size_t(c)] + p.shift : 0.f;
        int64_t o = p.planar ? (c * H + y) * W + x : (y * W + x) * OC + c;
        out[o] = convert_sat<Out>(v);
      }
    }
  }
}

}  // namespace stoker::kernels
