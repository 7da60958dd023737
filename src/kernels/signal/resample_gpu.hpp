// audio_resample on the GPU: resample.hpp's resample_cpu for a ragged batch in one launch (and
// one more for the input's conversion to floats, resample_input), bit for bit: the same float
// operations in the same order (no fused multiply-adds), the positions stepped in float from a
// double every 256 outputs, mono signals summed in resample_cpu's four lanes, channels in input
// order. (kernels/resize/resample_gpu is the image family's separable filter: its per-output tap
// tables would hold 2 * lobes weights for every output, and sum in another order.)
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

struct AudioResampleGpuSample {
  const void* in = nullptr;  // in_length x channels interleaved values of the input type
  // in_length x channels floats the input is converted into (resample_input), or null when
  // the input is float32 and read as it is.
  float* floats = nullptr;
  void* out = nullptr;  // out_length x channels values of the output type
  int64_t in_length = 0, out_length = 0;
  int32_t channels = 1;
  double scale = 1;  // in_rate / out_rate, as resample_cpu computes it
};

// A ResampleWindow in device memory: `lookup` holds its lookup.size() == `size` values.
struct AudioResampleGpuWindow {
  const float* lookup = nullptr;
  int32_t size = 0;
  float scale = 1, center = 1;
  int32_t lobes = 0;
};

// `samples`: a device array of n descriptors (n <= 65535); max_in_values: the most in_length x
// channels of a sample; max_out_length: the most out_length. in: int8/16/32, uint8/16/32 or
// float32; out likewise. Returns a cudaError_t (0: launched).
int audio_resample_gpu(const AudioResampleGpuSample* samples, int n, int64_t max_in_values,
                       int64_t max_out_length, DType in, DType out,
                       const AudioResampleGpuWindow& window, StreamHandle stream);

}  // namespace stoker::kernels
