// debayer on the GPU: debayer.hpp's per-pixel function over a ragged batch, one launch.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/color/debayer.hpp"

namespace stoker::kernels {

struct DebayerGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  DebayerShape shape;
  int pattern = 0;
};

// `samples`: device array of n (at most 65535); `max_pixels`: the largest H * W; `type`: uint8
// or uint16. Returns a cudaError_t (0: launched).
int debayer_gpu(const DebayerGpuSample* samples, int n, int64_t max_pixels, DType type,
                DebayerAlgorithm alg, StreamHandle stream);

}  // namespace stoker::kernels
