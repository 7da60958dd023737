// The rank filters of rank_filter.hpp on the GPU, equal to the CPU kernel: one thread per output
// value, one launch per pass for the whole batch. The median is found without a buffer by a
// binary search over the value keys (count of window values <= a key), as many steps as the
// key has bits, so that any window size fits.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/filter/rank_filter.hpp"

namespace stoker::kernels {

struct RankGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  void* tmp = nullptr;  // device scratch of the sample's size (iterations >= 2)
  RankShape shape;
};

// `samples`: device array; `max_elems`: the largest planes x height x width x channels. Types:
// u8, u16, f32.
int rank_filter_gpu(const RankGpuSample* samples, int n, int64_t max_elems, DType type, RankOp op,
                    int iterations, StreamHandle stream);

}  // namespace stoker::kernels
