// water, sphere and grid_mask on the GPU: one launch per ragged batch, the arithmetic of
// displacement.hpp, so that the results equal the CPU kernels' (displacement_cpu.hpp) bit for bit.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/geometry/displacement.hpp"

namespace stoker::kernels {

// `samples`: device array of n images, every one with `channels` channels (their dx/dy tables
// in device memory for water). grid_h x grid_w: the output extent one launch's tile grid covers
// per sample (e.g. the mean size); any positive size is correct. Types: u8 and f32.
// Returns a cudaError_t value.
int displace_gpu(const DisplaceSample* samples, int n, int64_t grid_h, int64_t grid_w, int channels,
                 DisplaceMap map, bool linear, DType type, StreamHandle stream);
bool displace_gpu_supports(DType type);

// The same for grid masks. Types: u8, i16, i32, f32.
int grid_mask_gpu(const GridMaskSample* samples, int n, int64_t grid_h, int64_t grid_w,
                  int channels, DType type, StreamHandle stream);
bool grid_mask_gpu_supports(DType type);

}  // namespace stoker::kernels
