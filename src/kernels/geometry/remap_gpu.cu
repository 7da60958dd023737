#include <cuda_runtime.h>

#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/geometry/remap_gpu.hpp"

namespace stoker::kernels {
namespace {

// One thread per output pixel; the grid covers a tile of the typical sample and each block
// walks its sample's tiles (as warp_perspective_gpu).
template <typename T, RemapInterp kInterp>
__global__ void remap_kernel(const RemapSample* __restrict__ samples, float shift) {
  const RemapSample s = samples[blockIdx.z];
  for (int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < s.h; y += gridDim.y * blockDim.y)
    for (int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < s.w; x += gridDim.x * blockDim.x)
      remap_pixel<T, kInterp>(s, shift, x, y);
}

}  // namespace

int remap_gpu(const RemapSample* samples, int n, int64_t grid_h, int64_t grid_w, RemapInterp interp,
              float shift, DType type, StreamHandle stream) {
  if (n <= 0 || grid_h <= 0 || grid_w <= 0) return 0;
  grid_h = grid_h < 65535 * 8 ? grid_h : 65535 * 8;
  grid_w = grid_w < (int64_t(1) << 30) ? grid_w : (int64_t(1) << 30);
  const dim3 block(32, 8);
  auto s = cudaStream_t(stream);
  int err = int(cudaErrorInvalidValue);
  visit_types<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(type, [&](auto t) {
    using T = decltype(t);
    err = 0;
    // gridDim.z holds at most 65535 samples (frames of sequences can be more).
    for (int first = 0; first < n && err == 0; first += 65535) {
      const int count = n - first < 65535 ? n - first : 65535;
      const dim3 grid(unsigned((grid_w + 31) / 32), unsigned((grid_h + 7) / 8), unsigned(count));
      if (interp == RemapInterp::kCubic)
        remap_kernel<T, RemapInterp::kCubic><<<grid, block, 0, s>>>(samples + first, shift);
      else if (interp == RemapInterp::kLinear)
        remap_kernel<T, RemapInterp::kLinear><<<grid, block, 0, s>>>(samples + first, shift);
      else
        remap_kernel<T, RemapInterp::kNearest><<<grid, block, 0, s>>>(samples + first, shift);
      err = int(cudaGetLastError());
    }
  });
  return err;
}

}  // namespace stoker::kernels
