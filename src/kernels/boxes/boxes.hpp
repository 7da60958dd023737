// Axis-aligned boxes of 2 or 3 dimensions (x, y, z) as corners: the overlap measures the box
// operators share (random_bbox_crop's thresholds, box_encoder's matching), host and device.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

struct BoxNd {
  float lo[3] = {0.f, 0.f, 0.f};
  float hi[3] = {0.f, 0.f, 0.f};
};

// The product of the extents (an inverted box has none).
STOKER_HOST_DEVICE inline float box_volume(const BoxNd& b, int ndim) {
  float v = 1.f;
  for (int d = 0; d < ndim; ++d) {
    const float e = b.hi[d] - b.lo[d];
    v = mul_rn(v, e > 0.f ? e : 0.f);
  }
  return v;
}

STOKER_HOST_DEVICE inline BoxNd box_intersection(const BoxNd& a, const BoxNd& b, int ndim) {
  BoxNd r;
  for (int d = 0; d < ndim; ++d) {
    r.lo[d] = a.lo[d] > b.lo[d] ? a.lo[d] : b.lo[d];
    r.hi[d] = a.hi[d] < b.hi[d] ? a.hi[d] : b.hi[d];
  }
  return r;
}

// Intersection over union (0 when both are empty).
STOKER_HOST_DEVICE inline float box_iou(const BoxNd& a, const BoxNd& b, int ndim) {
  const float inter = box_volume(box_intersection(a, b, ndim), ndim);
  const float uni = box_volume(a, ndim) + box_volume(b, ndim) - inter;
  return uni > 0.f ? inter / uni : 0.f;
}

// The fraction of `box` inside `window` (0 for an empty box).
STOKER_HOST_DEVICE inline float box_coverage(const BoxNd& window, const BoxNd& box, int ndim) {
  const float v = box_volume(box, ndim);
  return v > 0.f ? box_volume(box_intersection(window, box, ndim), ndim) / v : 0.f;
}

}  // namespace stoker::kernels
