// fn.filter on the GPU with filter.hpp's arithmetic (the same taps in the same order, the same
// fused and unfused accumulations, cvRound's rounding), so that it equals the CPU kernel bit for
// bit. One thread per output value, one launch per batch.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/filter/filter.hpp"

namespace stoker::kernels {

struct FilterGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  const float* taps = nullptr;  // device: k[0] x k[1] x k[2] weights
  const void* fill = nullptr;   // device: one value of the input's type (null: 0)
  FilterShape shape;
};

// `samples`: device array. `max_row`: the largest out[2] * channels; `max_rows`: the largest
// planes * out[0] * out[1]. Input types u8, i8, u16, i16, f16, f32; output the input's or f32.
int filter_gpu(const FilterGpuSample* samples, int n, int64_t max_row, int64_t max_rows,
               DType in_type, DType out_type, StreamHandle stream);

}  // namespace stoker::kernels
