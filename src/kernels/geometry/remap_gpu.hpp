// Remap on the GPU, one launch per ragged batch (per 65535 samples), with remap.hpp's per-pixel
// code, so that results equal remap_cpu bit for bit.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/geometry/remap.hpp"

namespace stoker::kernels {

// `samples`: device array of n images (device pointers). grid_h x grid_w: the extent one
// launch's tile grid covers per sample (e.g. the mean image size); any positive size is correct.
// `shift` is added to every map value. Types: u8, u16, i16, f32. Returns a cudaError_t value.
int remap_gpu(const RemapSample* samples, int n, int64_t grid_h, int64_t grid_w, RemapInterp interp,
              float shift, DType type, StreamHandle stream);

}  // namespace stoker::kernels
