// Histogram equalization on the GPU with equalize.hpp's table (the same float arithmetic and
// rounding), so that it equals the CPU kernel bit for bit: a histogram pass (shared-memory bins
// per block, added into the sample's), one table per (sample, plane, channel), then a look-up
// pass. Four launches per batch (the first clears the bins).
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/color/equalize.hpp"

namespace stoker::kernels {

struct EqualizeGpuSample {
  const uint8_t* in = nullptr;
  uint8_t* out = nullptr;
  EqualizeShape shape;
  uint32_t* hist = nullptr;  // device: 256 bins per (plane, channel)
  uint8_t* lut = nullptr;    // device: 256 entries per (plane, channel)
};

// `samples`: device array; `max_values`: the largest pixels * channels of a plane;
// `max_groups`: the largest planes * channels (at most 65535, as `max_planes` and n).
int equalize_gpu(const EqualizeGpuSample* samples, int n, int64_t max_values, int64_t max_groups,
                 int64_t max_planes, StreamHandle stream);

}  // namespace stoker::kernels
