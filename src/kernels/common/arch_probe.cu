#include <cuda_runtime.h>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {
namespace {

__global__ void probe_kernel() {}

}  // namespace

// Whether the device can run this library's kernels: asking for a kernel's attributes loads
// its image for the device (SASS, or PTX compiled by the driver) without running anything.
int probe_kernel_image(int device) {
  DeviceGuard guard(device);
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, probe_kernel);
  if (err != cudaSuccess) (void)cudaGetLastError();  // not sticky; clear it for the caller
  return int(err);
}

}  // namespace stoker::kernels
