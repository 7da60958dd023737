// The numeric cast on the GPU, one launch per batch: every dtype to every dtype with
// cast_value's rules (core/dtype.hpp): floats to the nearest representable value,
// floats to integers rounded half away from zero, everything saturated, NaN to 0.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

struct CastGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t count = 0;  // elements
};

// How floats become integers and float16: kCast as cast_value (fn.cast), kSlice as slice_cast
// (crop's and slice's `dtype`: toward zero, float16 saturated to +-65504).
enum class CastRule { kCast, kSlice };

// `samples`: a device array of n descriptors. Returns the CUDA error of the launch (0: none).
int cast_gpu(const CastGpuSample* samples, int n, int64_t max_count, DType in, DType out,
             StreamHandle stream, CastRule rule = CastRule::kCast);

}  // namespace stoker::kernels
