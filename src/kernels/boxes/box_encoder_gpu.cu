#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/boxes/box_encoder.hpp"

namespace stoker::kernels {
namespace {

constexpr int kBlock = 256;

// Step 1: block (box, sample) finds the box's best anchor (the last on ties).
__global__ void best_anchor_kernel(const BoxEncoderGpuSample* __restrict__ samples,
                                   const float* __restrict__ anchors, int64_t a) {
  const BoxEncoderGpuSample& s = samples[blockIdx.y];
  __shared__ float best_iou[kBlock];
  __shared__ int64_t best_idx[kBlock];
  for (int64_t b = blockIdx.x; b < s.n; b += gridDim.x) {
    const BoxNd box = ltrb_box(s.boxes + 4 * b);
    float best = -1.f;
    int64_t idx = -1;
    for (int64_t j = threadIdx.x; j < a; j += blockDim.x) {
      const float iou = box_iou(box, ltrb_box(anchors + 4 * j), 2);
      if (iou >= best) best = iou, idx = j;
    }
    best_iou[threadIdx.x] = best;
    best_idx[threadIdx.x] = idx;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const float o = best_iou[threadIdx.x + half];
        const int64_t oi = best_idx[threadIdx.x + half];
        // the larger IoU; on ties the larger anchor index (the CPU's "last on ties")
        if (o > best_iou[threadIdx.x] || (o == best_iou[threadIdx.x] && oi > best_idx[threadIdx.x])) {
          best_iou[threadIdx.x] = o;
          best_idx[threadIdx.x] = oi;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) s.best_anchor[b] = best_idx[0];
    __syncthreads();
  }
}

// Step 2: each thread an anchor of sample blockIdx.y.
__global__ void match_kernel(const BoxEncoderGpuSample* __restrict__ samples,
                             const float* __restrict__ anchors, int64_t a, BoxEncoderParams p) {
  const BoxEncoderGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < a; j += step) {
    const BoxNd anchor = ltrb_box(anchors + 4 * j);
    float best = -1.f;
    int64_t match = -1;
    for (int64_t b = 0; b < s.n; ++b) {
      const float iou = s.best_anchor[b] == j ? 2.f : box_iou(ltrb_box(s.boxes + 4 * b), anchor, 2);
      if (iou >= best) best = iou, match = b;
    }
    const bool matched = match >= 0 && best > p.criteria;
    encode_row(matched ? s.boxes + 4 * match : nullptr, anchors + 4 * j, p, s.out_boxes + 4 * j);
    s.out_labels[j] = matched ? s.labels[match] : 0;
  }
}

}  // namespace

int box_encode_gpu(const BoxEncoderGpuSample* samples, int count, int64_t max_boxes,
                   const float* anchors, int64_t a, const BoxEncoderParams& p,
                   StreamHandle stream) {
  if (count == 0 || a == 0) return 0;
  if (count > 65535) return int(cudaErrorInvalidConfiguration);
  const auto s = cudaStream_t(stream);
  if (max_boxes > 0) {
    const dim3 grid(unsigned(std::min<int64_t>(max_boxes, 4096)), unsigned(count));
    best_anchor_kernel<<<grid, kBlock, 0, s>>>(samples, anchors, a);
  }
  const dim3 grid(unsigned(std::min<int64_t>((a + kBlock - 1) / kBlock, 1024)), unsigned(count));
  match_kernel<<<grid, kBlock, 0, s>>>(samples, anchors, a, p);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
