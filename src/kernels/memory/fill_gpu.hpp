// Fills device memory with a byte pattern on a stream (used to poison outputs in GPU tests so
// that unwritten elements are caught). Host-callable; the kernel lives in fill_gpu.cu.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stoker::kernels {

// Returns a CUDA error code (0 on success) instead of throwing: device code paths report
// through their caller, which adds context.
int fill_bytes_gpu(void* device_ptr, size_t bytes, uint8_t value, void* cuda_stream);

}  // namespace stoker::kernels
