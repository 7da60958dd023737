// bbox_paste: boxes of an image pasted on a canvas `ratio` times larger, at (paste_x, paste_y)
// (0: the canvas's top-left, 1: its bottom-right), in the canvas's normalised coordinates:
// corners become c / ratio + paste * (ratio - 1) / ratio, extents e / ratio. As DALI, the offset
// is pulled back, an ulp at a time, until scale + offset <= 1, so boxes in [0, 1] stay there.
#pragma once

#include <cmath>
#include <cstdint>

namespace stoker::kernels {

struct BboxPaste {
  float scale = 1.f;             // 1 / ratio
  float offset[2] = {0.f, 0.f};  // x, y
  bool ltrb = false;
};

inline BboxPaste bbox_paste_params(float ratio, float paste_x, float paste_y, bool ltrb) {
  BboxPaste p;
  p.scale = 1 / ratio;
  p.ltrb = ltrb;
  const float mul = (ratio - 1) / ratio;
  const float paste[2] = {paste_x, paste_y};
  for (int d = 0; d < 2; ++d) {
    float o = paste[d] * mul;
    if (p.scale + o > 1) {
      o = 1 - p.scale;
      while (p.scale + o > 1) o = std::nextafter(o, -1.0f);
    }
    p.offset[d] = o;
  }
  return p;
}

inline void bbox_paste_cpu(float* out, const float* in, int64_t boxes, const BboxPaste& p) {
  for (int64_t i = 0; i < boxes; ++i) {
    const float* b = in + 4 * i;
    float* o = out + 4 * i;
    o[0] = b[0] * p.scale + p.offset[0];
    o[1] = b[1] * p.scale + p.offset[1];
    o[2] = p.ltrb ? b[2] * p.scale + p.offset[0] : b[2] * p.scale;
    o[3] = p.ltrb ? b[3] * p.scale + p.offset[1] : b[3] * p.scale;
  }
}

}  // namespace stoker::kernels
