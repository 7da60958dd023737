// The noise operators on the GPU: one launch per batch, one thread per work item of
// noise.hpp, which the CPU kernel runs too (so the backends agree bit for bit).
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/random/noise.hpp"

namespace stoker::kernels {

// `samples`: a device array of n descriptors (device pointers); `max_units`: the most units of
// any sample. Returns the launch's cudaError_t as an int (0: success).
int noise_gpu(NoiseKind kind, const NoiseSample* samples, int n, int64_t max_units, DType dtype,
              StreamHandle stream);

}  // namespace stoker::kernels
