// nonsilent_region on the GPU: nonsilent_region.hpp's CPU kernel for a ragged batch in two
// launches, bit for bit. The short-term power: 8- and 16-bit integers sum exactly in int64, so
// any split of the signal gives the CPU's sums (each thread slides over a segment of at least a
// window, starting from its exact sum); float sums drift, so each thread runs whole blocks of
// reset_interval samples (the whole signal when it is -1) in the CPU's order, the CPU's
// arithmetic in float, and a signal that is never reset is one thread's work. Then one block per
// sample: the reference (the largest power, NaN when the first one is, as the CPU's scan), the
// first and last sample at or above the threshold, the region moved back by window - 1.
#pragma once

#include <algorithm>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

struct NonsilentGpuSample {
  const void* in = nullptr;
  int64_t length = 0;
  int64_t window = 1;       // min(window_length, length)
  float mean_factor = 1.f;  // 1 / float(window), as moving_mean_square computes it
  int64_t segment = 1;      // samples per thread (nonsilent_segment)
  float* power = nullptr;   // scratch of `length` floats
  int32_t* begin = nullptr;
  int32_t* region_length = nullptr;
};

// Whether moving_mean_square sums `in` exactly (kExactMeanSquare: 8- and 16-bit integers).
inline bool nonsilent_exact(DType in) {
  return in == DType::kU8 || in == DType::kI8 || in == DType::kU16 || in == DType::kI16;
}

// The samples one thread of the power kernel runs from a fresh sum: for exact sums a window
// (at least 256), so that the sum it starts from costs no more than its slide; else
// moving_mean_square's blocks (reset_interval, or the whole signal for -1).
inline int64_t nonsilent_segment(DType in, int64_t length, int64_t window, int64_t reset_interval) {
  if (nonsilent_exact(in)) return std::max<int64_t>(window, 256);
  return reset_interval < 0 ? std::max<int64_t>(length, 1) : reset_interval;
}

// `samples`: a device array of n (<= 65535); max_segments: the most segments of a sample
// (ceil(length / segment)). With has_reference the threshold is reference * factor, else the
// sample's largest power times factor, factor = 10^(cutoff_db / 10) as nonsilent_threshold
// computes it. in: uint8/16/32/64, int8/16/32/64 or float32. Returns a cudaError_t.
int nonsilent_region_gpu(const NonsilentGpuSample* samples, int n, int64_t max_segments, DType in,
                         bool has_reference, float reference, float factor, StreamHandle stream);

}  // namespace stoker::kernels
