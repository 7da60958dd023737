#include "stoker/kernels/common/arch_check.hpp"

#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"

namespace stoker::kernels {

#ifdef STOKER_HAVE_CUDA
int probe_kernel_image(int device);  // arch_probe.cu: 0, or the CUDA error of a probe kernel
#endif

std::string compiled_cuda_architectures() {
#ifdef STOKER_CUDA_ARCHITECTURES
  return STOKER_CUDA_ARCHITECTURES;
#else
  return "";
#endif
}

void check_kernel_image(int device) {
#ifdef STOKER_HAVE_CUDA
  if (device < 0 || device >= cuda_device_count()) return;  // the executor reports that
  const int err = probe_kernel_image(device);
  if (err == 0) return;
  const CudaDeviceInfo d = cuda_device_info(device);
  throw RuntimeError(detail::concat(
      "GPU ", device, " (", d.name, ", compute capability ", d.major, ".", d.minor,
      ") cannot run this build of stoker: its GPU kernels were compiled for the CUDA "
      "architectures ",
      compiled_cuda_architectures(), " (CUDA error ", err,
      "). Install a stoker wheel, which covers every GPU since Turing, or rebuild with "
      "-DSTOKER_CUDA_ARCHITECTURES=",
      d.major, d.minor, "."));
#else
  (void)device;
#endif
}

}  // namespace stoker::kernels
