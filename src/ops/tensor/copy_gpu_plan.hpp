// Host side of the GPU strided copy (kernels/tensor/copy_gpu): descriptors for the
// data-movement operators (transpose, pad, cat, stack, paste, erase), uploaded with one copy and
// run with one launch. CUDA builds only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/kernels/tensor/copy_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// A descriptor: iterate `shape`; out at `out_stride`, in at `in_stride` from `in_start`, inside
// `in_shape` (elsewhere `fill`). Errors name `op` (more than kCopyMaxDims dimensions).
kernels::StridedCopy copy_desc(const void* in, void* out, const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& out_stride,
                                  const std::vector<int64_t>& in_stride,
                                  const std::vector<int64_t>& in_shape, const std::string& op,
                                  const std::vector<int64_t>& in_start = {}, uint64_t fill = 0);

// Uploads the descriptors (pinned staging, one copy on ws.stream) and launches the kernel.
void run_copies(const Operator& op, Workspace& ws, const std::vector<kernels::StridedCopy>& d,
                size_t element_size);

}  // namespace stoker::ops
