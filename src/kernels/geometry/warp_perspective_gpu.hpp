// Perspective warps on the GPU, one launch per ragged batch, with warp_perspective.hpp's
// arithmetic (OpenCV's), so that results equal warp_perspective_cpu bit for bit.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/geometry/warp_perspective.hpp"

namespace stoker::kernels {

// `samples`: device array of n images, each with `channels` (1 to 4) channels. grid_h x grid_w:
// the output extent one launch's tile grid covers per sample (e.g. the mean output size); any
// positive size is correct. Types: u8, u16, i16, f32. Returns a cudaError_t value.
int warp_perspective_gpu(const PerspectiveSample* samples, int n, int64_t grid_h, int64_t grid_w,
                         int channels, PerspectiveInterp interp, WarpBorder border, DType type,
                         StreamHandle stream);
bool warp_perspective_gpu_supports(DType type);

}  // namespace stoker::kernels
