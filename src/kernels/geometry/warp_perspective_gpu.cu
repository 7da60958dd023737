#include <cuda_runtime.h>

#include <type_traits>

#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/geometry/warp_perspective_gpu.hpp"

namespace stoker::kernels {
namespace {

// OpenCV's saturate_cast<T>(float) (half to even, saturated), as perspective_store_cpu.
template <typename T>
struct StoreGpu {
  __device__ T operator()(float v) const {
    if constexpr (std::is_same_v<T, float>) {
      return v;
    } else {
      const float r = rintf(v);
      if (!(r == r)) return T(0);
      constexpr float lo = std::is_signed_v<T> ? -32768.f : 0.f;
      constexpr float hi = std::is_signed_v<T> ? 32767.f : sizeof(T) == 1 ? 255.f : 65535.f;
      return T(r < lo ? lo : r > hi ? hi : r);
    }
  }
};

// One thread per output pixel; the grid covers a tile of the typical sample and each block
// walks its sample's tiles (as warp_affine_gpu).
template <typename T, PerspectiveInterp kInterp>
__global__ void perspective_kernel(const PerspectiveSample* __restrict__ samples, int channels,
                                   WarpBorder border) {
  constexpr bool kLinear = kInterp == PerspectiveInterp::kLinear;
  const PerspectiveSample s = samples[blockIdx.z];
  const int64_t bw0 = perspective_block_width(s.oh, s.ow);
  T* out = static_cast<T*>(s.out);
  for (int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < s.oh; y += gridDim.y * blockDim.y)
    for (int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < s.ow; x += gridDim.x * blockDim.x)
      if constexpr (kInterp == PerspectiveInterp::kCubic)
        perspective_pixel_cubic<T>(s, channels, border, x, y, out + (y * s.ow + x) * channels,
                                   StoreGpu<T>{});
      else if (perspective_float_path<T>(channels))
        perspective_pixel_f<T, kLinear>(s, channels, border, x, y, out + (y * s.ow + x) * channels,
                                        StoreGpu<T>{});
      else
        perspective_pixel<T, kLinear>(s, channels, border, bw0, x, y,
                                      out + (y * s.ow + x) * channels, StoreGpu<T>{});
}

template <typename F>
bool visit_perspective_types(DType type, F&& f) {
  return visit_types<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(type, f);
}

}  // namespace

int warp_perspective_gpu(const PerspectiveSample* samples, int n, int64_t grid_h, int64_t grid_w,
                         int channels, PerspectiveInterp interp, WarpBorder border, DType type,
                         StreamHandle stream) {
  if (n == 0 || grid_h <= 0 || grid_w <= 0) return 0;
  if (n > 65535 || channels < 1 || channels > kPerspectiveMaxChannels)
    return int(cudaErrorInvalidValue);
  grid_h = grid_h < 65535 * 8 ? grid_h : 65535 * 8;
  grid_w = grid_w < (int64_t(1) << 30) ? grid_w : (int64_t(1) << 30);
  const dim3 grid(unsigned((grid_w + 31) / 32), unsigned((grid_h + 7) / 8), unsigned(n));
  const dim3 block(32, 8);
  auto s = cudaStream_t(stream);
  int err = int(cudaErrorInvalidValue);
  visit_perspective_types(type, [&](auto t) {
    using T = decltype(t);
    if (interp == PerspectiveInterp::kCubic)
      perspective_kernel<T, PerspectiveInterp::kCubic>
          <<<grid, block, 0, s>>>(samples, channels, border);
    else if (interp == PerspectiveInterp::kLinear)
      perspective_kernel<T, PerspectiveInterp::kLinear>
          <<<grid, block, 0, s>>>(samples, channels, border);
    else
      perspective_kernel<T, PerspectiveInterp::kNearest>
          <<<grid, block, 0, s>>>(samples, channels, border);
    err = int(cudaGetLastError());
  });
  return err;
}

bool warp_perspective_gpu_supports(DType type) {
  return visit_perspective_types(type, [](auto) {});
}

}  // namespace stoker::kernels
