// clahe on the GPU with clahe.hpp's per-tile and per-pixel functions (the same float
// arithmetic), so that it equals the CPU kernel: a pass computing L* of luma samples, one block
// per (tile, plane, sample) building that tile's table, then a pass blending them. Three
// launches per batch.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/color/clahe.hpp"

namespace stoker::kernels {

struct ClaheGpuSample {
  const uint8_t* in = nullptr;
  uint8_t* out = nullptr;
  uint8_t* plane = nullptr;  // device: H * W bytes (luma samples), L* before equalization
  uint8_t* luts = nullptr;   // device: planes * tiles_y * tiles_x * 256 bytes
  int64_t height = 0, width = 0;
  int channels = 1;
  bool luma = false;  // RGB through L* (channels == 3)
  ClaheGeometry geometry;
  const LabTables* lab = nullptr;  // device copy of lab_tables() (luma samples)
};

// `samples`: device array of n (at most 65535); `max_pixels`: the largest H * W; `max_tiles`: the
// largest tiles_x * tiles_y (at most 2^31 - 1). Returns a cudaError_t (0: launched).
int clahe_gpu(const ClaheGpuSample* samples, int n, int64_t max_pixels, int64_t max_tiles,
              StreamHandle stream);

}  // namespace stoker::kernels
