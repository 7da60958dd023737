#include <cuda_runtime.h>

#include "stoker/kernels/color/yuv_to_rgb.hpp"

namespace stoker::kernels {
namespace {

// One thread per output pixel: the CPU's pixel function, in the same integers.
template <typename Out>
__global__ void yuv_to_rgb_kernel(YuvPlanes p, bool rgb, bool normalized, Out* out) {
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t y = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (x >= p.width || y >= p.height) return;
  int32_t v[3];
  yuv_pixel(p, rgb, x, y, v);
  Out* o = out + (y * p.width + x) * 3;
  for (int c = 0; c < 3; ++c) {
    if constexpr (sizeof(Out) == 1) {
      o[c] = yuv_to_u8(v[c]);
    } else {
      o[c] = yuv_to_float(v[c], normalized);
    }
  }
}

}  // namespace

int yuv_to_rgb_gpu(const YuvPlanes& planes, bool rgb, bool normalized, DType out_type, void* out,
                   StreamHandle stream) {
  if (planes.width <= 0 || planes.height <= 0) return 0;
  const dim3 block(32, 8);
  const dim3 grid(unsigned((planes.width + 31) / 32), unsigned((planes.height + 7) / 8));
  auto s = cudaStream_t(stream);
  if (out_type == DType::kU8) {
    yuv_to_rgb_kernel<<<grid, block, 0, s>>>(planes, rgb, normalized, static_cast<uint8_t*>(out));
  } else if (out_type == DType::kF32) {
    yuv_to_rgb_kernel<<<grid, block, 0, s>>>(planes, rgb, normalized, static_cast<float*>(out));
  } else {
    return int(cudaErrorInvalidValue);
  }
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
