// bb_flip: mirrors boxes in normalised coordinates (0-1). A box is 4 floats, [x, y, w, h] or
// [l, t, r, b]; a horizontal flip maps [l, r] to [1 - r, 1 - l], a vertical one [t, b] to
// [1 - b, 1 - t]. [x, y, w, h] boxes go through [l, t, r, b] and back (r = x + w, then
// w = r - l), as DALI computes them: an unflipped width can move by a rounding.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

struct BbFlip {
  bool ltrb = false;
  bool horizontal = true;
  bool vertical = false;
};

STOKER_HOST_DEVICE inline void bb_flip_box(float* out, const float* in, const BbFlip& p) {
  float l = in[0], t = in[1];
  float r = p.ltrb ? in[2] : in[0] + in[2];
  float b = p.ltrb ? in[3] : in[1] + in[3];
  if (p.horizontal) {
    const float flipped_l = 1.0f - r;
    r = 1.0f - l;
    l = flipped_l;
  }
  if (p.vertical) {
    const float flipped_t = 1.0f - b;
    b = 1.0f - t;
    t = flipped_t;
  }
  out[0] = l;
  out[1] = t;
  out[2] = p.ltrb ? r : r - l;
  out[3] = p.ltrb ? b : b - t;
}

inline void bb_flip_cpu(float* out, const float* in, int64_t boxes, const BbFlip& p) {
  for (int64_t i = 0; i < boxes; ++i) bb_flip_box(out + 4 * i, in + 4 * i, p);
}

// The GPU's: one launch for a batch of per-sample descriptors (a device array of n).
struct BbFlipGpuSample {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t boxes = 0;
  BbFlip params;
};
int bb_flip_gpu(const BbFlipGpuSample* samples, int n, int64_t max_boxes, StreamHandle stream);

}  // namespace stoker::kernels
