#include <cuda_runtime.h>

#include <type_traits>

#include "stoker/kernels/filter/gaussian_blur_gpu.hpp"
#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/filter/border.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
__device__ __forceinline__ T store(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return to_int_saturated<T>(v);
  }
}

// Horizontal pass: one thread per (row, element of the row).
template <typename In>
__global__ void blur_rows(const BlurGpuSample* __restrict__ samples) {
  const BlurGpuSample& s = samples[blockIdx.z];
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t y = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (e >= s.w * s.c || y >= s.h) return;
  const int64_t x = e / s.c, ch = e % s.c;
  const In* row = static_cast<const In*>(s.in) + y * s.w * s.c;
  float acc = 0.f;
  for (int k = -s.rx; k <= s.rx; ++k)
    acc += s.kx[k + s.rx] * float(row[reflect101(x + k, s.w) * s.c + ch]);
  s.scratch[y * s.w * s.c + e] = acc;
}

// Vertical pass from the scratch.
template <typename Out>
__global__ void blur_columns(const BlurGpuSample* __restrict__ samples) {
  const BlurGpuSample& s = samples[blockIdx.z];
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t y = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t row = s.w * s.c;
  if (e >= row || y >= s.h) return;
  float acc = 0.f;
  for (int k = -s.ry; k <= s.ry; ++k)
    acc += s.ky[k + s.ry] * s.scratch[reflect101(y + k, s.h) * row + e];
  static_cast<Out*>(s.out)[y * row + e] = store<Out>(acc);
}

template <typename In>
int rows(const BlurGpuSample* s, dim3 grid, dim3 block, cudaStream_t st) {
  blur_rows<In><<<grid, block, 0, st>>>(s);
  return int(cudaGetLastError());
}
template <typename Out>
int columns(const BlurGpuSample* s, dim3 grid, dim3 block, cudaStream_t st) {
  blur_columns<Out><<<grid, block, 0, st>>>(s);
  return int(cudaGetLastError());
}

}  // namespace

int gaussian_blur_gpu(const BlurGpuSample* samples, int n, int64_t max_h, int64_t max_row,
                      DType in_type, DType out_type, StreamHandle stream) {
  if (n == 0 || max_h == 0 || max_row == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const dim3 block(64, 4);
  const dim3 grid(unsigned((max_row + 63) / 64), unsigned((max_h + 3) / 4), unsigned(n));
  auto st = cudaStream_t(stream);
  int e = int(cudaErrorInvalidValue);
  switch (in_type) {
    case DType::kU8:
      e = rows<uint8_t>(samples, grid, block, st);
      break;
    case DType::kI16:
      e = rows<int16_t>(samples, grid, block, st);
      break;
    case DType::kU16:
      e = rows<uint16_t>(samples, grid, block, st);
      break;
    case DType::kF32:
      e = rows<float>(samples, grid, block, st);
      break;
    default:
      break;
  }
  if (e) return e;
  switch (out_type) {
    case DType::kU8:
      return columns<uint8_t>(samples, grid, block, st);
    case DType::kI16:
      return columns<int16_t>(samples, grid, block, st);
    case DType::kU16:
      return columns<uint16_t>(samples, grid, block, st);
    case DType::kF32:
      return columns<float>(samples, grid, block, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
