// bbox_rotate's box maths (DALI's, in float32 and in its order of operations): the box's four
// corners are centred on the image, turned by the angle (counter-clockwise as displayed, y
// pointing down), moved to the canvas's centre and enclosed; "fixed" then shrinks the
// enclosure back to the box's own extents (swapped when the turn swapped its orientation),
// "halfway" by half that. The result is clipped to the canvas; a box keeping less than
// `remove_threshold` of its area is dropped.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace stoker::kernels {

struct BboxRotate {
  enum class Mode { kExpand, kFixed, kHalfway };
  float cos_a = 1, sin_a = 0;
  float in_w = 0, in_h = 0;    // the image, in pixels
  float out_w = 0, out_h = 0;  // the canvas the rotated image gets
  Mode mode = Mode::kExpand;
  float remove_threshold = 0.1f;
  bool ltrb = true, normalized = true;
};

// Turns `n` boxes (4 floats each) of `in`; writes the kept ones to `out` (same layout) and
// returns their indices in `in`.
inline std::vector<int64_t> bbox_rotate_cpu(float* out, const float* in, int64_t n,
                                            const BboxRotate& p) {
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    float l = in[4 * i], t = in[4 * i + 1], r = in[4 * i + 2], b = in[4 * i + 3];
    if (!p.ltrb) r += l, b += t;
    float xs[4] = {l, r, l, r}, ys[4] = {t, t, b, b};
    for (int k = 0; k < 4; ++k) {
      if (p.normalized) {
        xs[k] = (xs[k] - 0.5f) * p.in_w, ys[k] = (ys[k] - 0.5f) * p.in_h;
      } else {
        xs[k] = xs[k] - p.in_w / 2, ys[k] = ys[k] - p.in_h / 2;
      }
    }
    const float old_w = xs[1] - xs[0], old_h = ys[2] - ys[0];
    for (int k = 0; k < 4; ++k) {
      const float x = xs[k], y = ys[k];
      xs[k] = x * p.cos_a + y * p.sin_a + p.out_w / 2;
      ys[k] = -x * p.sin_a + y * p.cos_a + p.out_h / 2;
    }
    float box[4] = {*std::min_element(xs, xs + 4), *std::min_element(ys, ys + 4),
                    *std::max_element(xs, xs + 4), *std::max_element(ys, ys + 4)};
    if (p.mode != BboxRotate::Mode::kExpand) {
      const float new_w = box[2] - box[0], new_h = box[3] - box[1];
      const bool swapped = (old_w < old_h) != (new_w < new_h);
      float dw = (new_w - (swapped ? old_h : old_w)) * 0.5f;
      float dh = (new_h - (swapped ? old_w : old_h)) * 0.5f;
      if (p.mode == BboxRotate::Mode::kHalfway) dw *= 0.5f, dh *= 0.5f;
      box[0] += dw, box[1] += dh, box[2] -= dw, box[3] -= dh;
    }
    const float old_area = (box[2] - box[0]) * (box[3] - box[1]);
    box[0] = std::clamp(box[0], 0.f, p.out_w), box[1] = std::clamp(box[1], 0.f, p.out_h);
    box[2] = std::clamp(box[2], 0.f, p.out_w), box[3] = std::clamp(box[3], 0.f, p.out_h);
    const float new_area = (box[2] - box[0]) * (box[3] - box[1]);
    if (!(new_area / old_area >= p.remove_threshold)) continue;  // NaN (no area) too, as DALI
    if (!p.ltrb) box[2] -= box[0], box[3] -= box[1];
    if (p.normalized) {
      const float rw = 1.f / p.out_w, rh = 1.f / p.out_h;
      box[0] *= rw, box[1] *= rh, box[2] *= rw, box[3] *= rh;
    }
    float* o = out + 4 * int64_t(kept.size());
    std::copy(box, box + 4, o);
    kept.push_back(i);
  }
  return kept;
}

}  // namespace stoker::kernels
