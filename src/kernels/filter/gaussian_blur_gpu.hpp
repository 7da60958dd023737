// Separable Gaussian blur on the GPU with gaussian_blur_cpu.hpp's conventions (reflect-101
// borders, float arithmetic in the same order: a horizontal pass into float scratch, then a
// vertical pass, rounded half away from zero and saturated for integers). Two launches per
// batch, whatever the samples' sizes and windows.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

struct BlurGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  float* scratch = nullptr;  // h * w * c floats (device)
  int64_t h = 0, w = 0, c = 1;
  const float* kx = nullptr;  // device: 2 rx + 1 taps
  const float* ky = nullptr;  // device: 2 ry + 1 taps
  int32_t rx = 0, ry = 0;
};

// `samples`: device array. Types: u8, i16, u16, f32 (in and out).
int gaussian_blur_gpu(const BlurGpuSample* samples, int n, int64_t max_h, int64_t max_row,
                      DType in_type, DType out_type, StreamHandle stream);

}  // namespace stoker::kernels
