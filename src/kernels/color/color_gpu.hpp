// Colour adjustments on the GPU, one launch per batch: per sample either an affine map of every
// element (out = in * gain + bias: brightness, contrast) or a 3x3 matrix plus offset on RGB
// pixels (hue, saturation, hsv, color_twist). The same arithmetic as color_cpu.hpp (float,
// rounded half away from zero and saturated for integers, RNE for float16).
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

struct ColorGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t elements = 0;                       // of the input (matrix: in_channels per pixel)
  int32_t in_channels = 3, out_channels = 3;  // matrix: 1 (gray, repeated) or 3; 1 out: row 0
  float gain = 1, bias = 0;                   // affine
  float m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};   // matrix, row-major
  float offset[3] = {0, 0, 0};
};

// `samples`: a device array of n descriptors. in/out types: uint8, float16, float32.
int color_gpu(const ColorGpuSample* samples, int n, int64_t max_elements, bool matrix,
              DType in_type, DType out_type, StreamHandle stream);

}  // namespace stoker::kernels
