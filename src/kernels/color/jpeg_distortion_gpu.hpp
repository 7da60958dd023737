// jpeg_compression_distortion on the GPU (DALI 2.4's algorithm, jpeg_distortion.hpp): every
// 16x16 block of every image of a batch in one launch.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/color/jpeg_distortion.hpp"

namespace stoker::kernels {

struct JpegDistortionGpuSample {
  const uint8_t* in = nullptr;  // h x w x 3, dense
  uint8_t* out = nullptr;
  int64_t h = 0, w = 0;
  JpegDistortionTables tables;
};

// `samples`: device array of n; `most_blocks`: the largest sample's count of
// 16x16 blocks. Returns a cudaError_t (0: launched).
int jpeg_distortion_gpu(const JpegDistortionGpuSample* samples, int n, int64_t most_blocks,
                        StreamHandle stream);

}  // namespace stoker::kernels
