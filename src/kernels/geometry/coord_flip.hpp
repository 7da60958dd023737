// coord_flip: reflects coordinates about a centre. A sample is N points of `ndim` (1 to 3)
// float32 coordinates, row after row; coordinate d of a point becomes origin[d] - v where
// flip[d] is set (origin = 2 * centre, in float32 as DALI computes it) and stays otherwise.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

struct CoordFlip {
  int32_t ndim = 2;
  bool flip[3] = {false, false, false};
  float origin[3] = {1.f, 1.f, 1.f};
};

inline void coord_flip_cpu(float* out, const float* in, int64_t count, const CoordFlip& p) {
  for (int64_t i = 0, d = 0; i < count; ++i, d = d + 1 == p.ndim ? 0 : d + 1)
    out[i] = p.flip[d] ? p.origin[d] - in[i] : in[i];
}

// The GPU's: one launch for a batch of per-sample descriptors (a device array of n).
struct CoordFlipGpuSample {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t count = 0;  // floats
  CoordFlip params;
};
int coord_flip_gpu(const CoordFlipGpuSample* samples, int n, int64_t max_count,
                   StreamHandle stream);

}  // namespace stoker::kernels
