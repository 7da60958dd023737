// normalize on the GPU: statistics over any set of axes, per sample or over the batch, in
// double (as the CPU operator), then out = (x - mean) / sqrt(var + eps) * scale + shift. Three
// launches per batch: sums, squared deviations (both accumulated with double atomics, so the
// last bits of the statistics may depend on scheduling), and the output.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

constexpr int kNormalizeMaxDims = 6;

struct NormalizeGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t elements = 0;
  int32_t ndim = 0;
  int64_t shape[kNormalizeMaxDims] = {};
  int64_t stride[kNormalizeMaxDims] = {};   // of the sample
  int64_t rstride[kNormalizeMaxDims] = {};  // of the reduced (group) index; 0 on reduced axes
  double* sum = nullptr;                    // device: this sample's (or the batch's) group slots
  double* sq = nullptr;
  double count = 0;  // elements per group (the batch's with batch statistics)
  // Given statistics (per sample): used when has_mean / has_stddev.
  int32_t has_mean = 0, has_stddev = 0;
  double mean = 0, stddev = 0;
};

struct NormalizeGpuParams {
  double epsilon = 0, scale = 1, shift = 0;
  int64_t ddof = 0;
  DType in_type = DType::kF32, out_type = DType::kF32;
};

// The sums and squares must be zeroed before the call (one device buffer, the caller's).
int normalize_gpu(const NormalizeGpuSample* samples, int n, int64_t max_elements,
                  const NormalizeGpuParams& p, StreamHandle stream);

}  // namespace stoker::kernels
