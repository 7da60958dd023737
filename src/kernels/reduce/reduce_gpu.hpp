// The reductions on the GPU: every sample of a batch in two launches. Pass 1 splits each
// output element's reduced values into chunks of up to `chunk_len` and folds each chunk with a
// warp into a partial accumulator (the output type, as on the CPU); pass 2 combines an output's
// partials in chunk order and finishes it (scale, root, conversion: reduce_ops.hpp), or, with
// nothing to reduce, converts the element. Integer results, min and max equal the CPU kernel's;
// float sums are added in another order, so they may differ from it in the last bits. The
// order is fixed, so a result does not change from run to run.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/reduce/reduce_ops.hpp"

namespace stoker::kernels {

struct ReduceGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  void* partial = nullptr;      // device scratch: plan.outputs * chunks accumulators (Out)
  const float* mean = nullptr;  // variance, std_dev: device, plan.outputs values or one
  int64_t mean_stride = 0;      // 1, or 0 for one mean for all
  int64_t chunks = 0;           // per output element; 0 when it reduces nothing
  int64_t chunk_len = 1;
  float norm = 1.f;  // reduce_norm(count - ddof)
  ReducePlan plan;
};

// Chunks of at most this many values: one warp folds one chunk.
constexpr int64_t kReduceGpuChunk = 4096;

// `items`: the most pass-1 items (outputs * chunks) of a sample; `outputs`: the most output
// elements. The types must be a pair DALI has for `r` (ops/reduce/reductions.cpp checks).
int reduce_gpu(Reduction r, DType in, DType out, const ReduceGpuSample* samples, int n,
               int64_t items, int64_t outputs, StreamHandle stream);

}  // namespace stoker::kernels
