// Which GPUs this build's kernels run on: the CUDA architectures they were compiled for, and a
// check, made when a pipeline that uses the GPU is built, that the device can run them (its
// compute capability has SASS in the library, or PTX the driver can compile for it). Without it
// a GPU the build does not cover fails mid-epoch with CUDA's "no kernel image".
#pragma once

#include <string>

namespace stoker::kernels {

// CMake's CUDA_ARCHITECTURES of this build, e.g. "75-real;80-real;...;120" ("" without CUDA).
std::string compiled_cuda_architectures();

// Throws RuntimeError when no kernel of this build runs on `device`, naming the device, its
// compute capability and the architectures compiled. No-op without CUDA.
void check_kernel_image(int device);

}  // namespace stoker::kernels
