// lookup_table on the GPU: the same gather as lookup_table.hpp's CPU kernel, every sample of a
// batch in one launch, the table (make_lut's bytes) in device memory.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

struct LutGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t elements = 0;
};

// `samples`: device array of n (at most 65535); `table`: device copy of LutTable::bytes (size +
// 1 entries of `entry_bytes`); `in`: an integer dtype. Returns a cudaError_t (0: launched).
int lookup_table_gpu(const LutGpuSample* samples, int n, int64_t max_elements, DType in,
                     const void* table, int64_t size, int entry_bytes, StreamHandle stream);

}  // namespace stoker::kernels
