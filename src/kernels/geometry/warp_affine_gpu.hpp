// Affine warps on the GPU, one launch per ragged batch, with warp_affine_cpu.hpp's conventions
// (pixel centres at +0.5, bilinear or nearest, fill value or clamped borders, rounding half
// away from zero and saturation for integers).
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

constexpr int kWarpMaxChannels = 16;

struct WarpGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t h = 0, w = 0, oh = 0, ow = 0;
  double m[6] = {1, 0, 0, 0, 1, 0};  // output centre -> input point (double, as the CPU)
};

// `samples`: device array; every sample has `channels` channels (<= kWarpMaxChannels when
// `fill` is used). `fill`: one value per channel, or nullptr to clamp. Types: the pairs of
// visit_warp_pairs (warp_affine_cpu.hpp); values interpolated in float, rounded and saturated
// into an integer output.
// grid_h x grid_w: the output extent one launch's tile grid covers per sample (the mean output
// size is a good choice: larger samples are walked tile by tile, smaller ones leave few threads
// idle); any positive size is correct. Width and row offsets must fit 32 bits (w * channels).
int warp_affine_gpu(const WarpGpuSample* samples, int n, int64_t grid_h, int64_t grid_w,
                    int channels, bool linear, const float* fill, DType in_type, DType out_type,
                    StreamHandle stream);

}  // namespace stoker::kernels
