// random.normal on the GPU: one launch per batch, one thread per Philox block of
// normal_draws.hpp, which the CPU kernel runs too (so the backends agree bit for bit).
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/random/normal_draws.hpp"

namespace stoker::kernels {

// `samples`: a device array of n descriptors (device pointers, at most 65535); `max_count`: the
// most values of any sample. Returns the launch's cudaError_t as an int (0: success).
int normal_gpu(const NormalSample* samples, int n, int64_t max_count, DType dtype, bool wide,
               StreamHandle stream);

}  // namespace stoker::kernels
