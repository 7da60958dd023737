// box_encoder: SSD's matching of ground-truth boxes to anchors (Liu et al., 2016, and MLPerf's
// SSD, as DALI implements it). Boxes and anchors are [l, t, r, b] (normalised).
//   1. Each box claims its best anchor (highest IoU; the last on ties) whatever the IoU.
//   2. Each anchor takes its best box (a claim counts as IoU 2; the last on ties) when that IoU
//      exceeds `criteria`.
// Outputs, per anchor: the matched box as [cx, cy, w, h] (or, with `offset`, SSD's regression
// targets ((box_c - anchor_c) / anchor_wh - mean) / std and (log(box_wh / anchor_wh) - mean) /
// std, both after multiplying by `scale`) and its label; unmatched anchors give the anchor
// itself as [cx, cy, w, h] (with `offset`: zeros) and label 0.
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/boxes/boxes.hpp"

namespace stoker::kernels {

struct BoxEncoderParams {
  float criteria = 0.5f;
  bool offset = false;
  float scale = 1.f;
  float means[4] = {0.f, 0.f, 0.f, 0.f};
  float stds[4] = {1.f, 1.f, 1.f, 1.f};
};

STOKER_HOST_DEVICE inline BoxNd ltrb_box(const float* v) {
  return BoxNd{{v[0], v[1], 0.f}, {v[2], v[3], 0.f}};
}

// The output row of anchor `anchor` matched to `box` (nullptr: unmatched).
STOKER_HOST_DEVICE inline void encode_row(const float* box, const float* anchor,
                                          const BoxEncoderParams& p, float* out) {
  const float acx = (anchor[0] + anchor[2]) * 0.5f, acy = (anchor[1] + anchor[3]) * 0.5f;
  const float aw = anchor[2] - anchor[0], ah = anchor[3] - anchor[1];
  if (box == nullptr) {
    const float unmatched[4] = {acx, acy, aw, ah};
    for (int k = 0; k < 4; ++k) out[k] = p.offset ? 0.f : unmatched[k];
    return;
  }
  const float bcx = (box[0] + box[2]) * 0.5f, bcy = (box[1] + box[3]) * 0.5f;
  const float bw = box[2] - box[0], bh = box[3] - box[1];
  if (!p.offset) {
    out[0] = bcx, out[1] = bcy, out[2] = bw, out[3] = bh;
    return;
  }
  const float s = p.scale;
  const float sa[4] = {mul_rn(acx, s), mul_rn(acy, s), mul_rn(aw, s), mul_rn(ah, s)};
  const float sb[4] = {mul_rn(bcx, s), mul_rn(bcy, s), mul_rn(bw, s), mul_rn(bh, s)};
  out[0] = ((sb[0] - sa[0]) / sa[2] - p.means[0]) / p.stds[0];
  out[1] = ((sb[1] - sa[1]) / sa[3] - p.means[1]) / p.stds[1];
  out[2] = (logf(sb[2] / sa[2]) - p.means[2]) / p.stds[2];
  out[3] = (logf(sb[3] / sa[3]) - p.means[3]) / p.stds[3];
}

// One sample on the CPU: n boxes (4 floats each) and their labels, `anchors` (4 floats each)
// of count a; `best_anchor` is scratch for n values.
inline void box_encode_cpu(const float* boxes, const int32_t* labels, int64_t n,
                           const float* anchors, int64_t a, const BoxEncoderParams& p,
                           float* out_boxes, int32_t* out_labels, int64_t* best_anchor) {
  for (int64_t b = 0; b < n; ++b) {
    const BoxNd box = ltrb_box(boxes + 4 * b);
    float best = -1.f;
    for (int64_t j = 0; j < a; ++j) {
      const float iou = box_iou(box, ltrb_box(anchors + 4 * j), 2);
      if (iou >= best) best = iou, best_anchor[b] = j;
    }
  }
  for (int64_t j = 0; j < a; ++j) {
    const BoxNd anchor = ltrb_box(anchors + 4 * j);
    float best = -1.f;
    int64_t match = -1;
    for (int64_t b = 0; b < n; ++b) {
      const float iou = best_anchor[b] == j ? 2.f : box_iou(ltrb_box(boxes + 4 * b), anchor, 2);
      if (iou >= best) best = iou, match = b;
    }
    const bool matched = match >= 0 && best > p.criteria;
    encode_row(matched ? boxes + 4 * match : nullptr, anchors + 4 * j, p, out_boxes + 4 * j);
    out_labels[j] = matched ? labels[match] : 0;
  }
}

// The GPU's: one launch for a batch; `anchors` (device, 4 * a floats) shared by every sample.
struct BoxEncoderGpuSample {
  const float* boxes = nullptr;
  const int32_t* labels = nullptr;
  int64_t n = 0;
  float* out_boxes = nullptr;
  int32_t* out_labels = nullptr;
  int64_t* best_anchor = nullptr;  // device scratch for n values
};
int box_encode_gpu(const BoxEncoderGpuSample* samples, int count, int64_t max_boxes,
                   const float* anchors, int64_t a, const BoxEncoderParams& p,
                   StreamHandle stream);

}  // namespace stoker::kernels
