#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/half_gpu.cuh"
#include "stoker/kernels/filter/filter_gpu.hpp"

namespace stoker::kernels {
namespace {

using Half = HalfBits;

template <typename T>
__device__ __forceinline__ float load(const T* p, int64_t i) {
  return load_as_float(p, i);
}

// filter_store's rule: half to even and saturated for integers (NaN: 0), RNE for float16.
template <typename T>
__device__ __forceinline__ T store(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, Half>) {
    return Half{__half_raw(__float2half_rn(v)).x};
  } else {
    if (!(v == v)) return T(0);
    const float lo = float(IntRange<T>::lo), hi = float(IntRange<T>::hi);
    const float r = rintf(v);
    return T(r <= lo ? lo : r >= hi ? hi : r);
  }
}

template <typename In, typename Out>
__global__ void filter_kernel(const FilterGpuSample* __restrict__ samples) {
  const FilterGpuSample& smp = samples[blockIdx.z];
  const FilterShape& s = smp.shape;
  const int64_t C = s.channels, row = s.out[2] * C;
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= row) return;
  const int64_t x = e / C, c = e % C;
  const int64_t rows = s.planes * s.out[0] * s.out[1];
  const In* in = static_cast<const In*>(smp.in);
  const float fill = smp.fill ? load(static_cast<const In*>(smp.fill), 0) : 0.f;
  const bool fused = e < s.fused;
  for (int64_t r = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; r < rows;
       r += int64_t(gridDim.y) * blockDim.y) {
    const int64_t y = r % s.out[1], z = (r / s.out[1]) % s.out[0], p = r / (s.out[1] * s.out[0]);
    const In* plane = in + p * s.in[0] * s.in[1] * s.in[2] * C;
    float acc = 0.f;
    const float* w = smp.taps;
    for (int64_t tz = 0; tz < s.k[0]; ++tz) {
      const int64_t iz = border_index(z + tz - s.anchor[0], s.in[0], s.border);
      for (int64_t ty = 0; ty < s.k[1]; ++ty) {
        const int64_t iy = border_index(y + ty - s.anchor[1], s.in[1], s.border);
        const In* src = iz < 0 || iy < 0 ? nullptr : plane + (iz * s.in[1] + iy) * s.in[2] * C;
        for (int64_t tx = 0; tx < s.k[2]; ++tx, ++w) {
          const float k = *w;
          if (k == 0.f) continue;  // as the CPU (OpenCV) skips zero taps
          const int64_t ix = border_index(x + tx - s.anchor[2], s.in[2], s.border);
          const float v = src == nullptr || ix < 0 ? fill : load(src, ix * C + c);
          acc = fused ? fmaf(v, k, acc) : __fadd_rn(acc, __fmul_rn(v, k));
        }
      }
    }
    static_cast<Out*>(smp.out)[r * row + e] = store<Out>(acc);
  }
}

template <typename In>
int launch(const FilterGpuSample* s, bool to_float, dim3 grid, dim3 block, cudaStream_t st) {
  if (to_float)
    filter_kernel<In, float><<<grid, block, 0, st>>>(s);
  else
    filter_kernel<In, In><<<grid, block, 0, st>>>(s);
  return int(cudaGetLastError());
}

}  // namespace

int filter_gpu(const FilterGpuSample* samples, int n, int64_t max_row, int64_t max_rows,
               DType in_type, DType out_type, StreamHandle stream) {
  if (n == 0 || max_row == 0 || max_rows == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const dim3 block(64, 4);
  const int64_t ys = (max_rows + 3) / 4;
  const dim3 grid(unsigned((max_row + 63) / 64), unsigned(ys < 65535 ? ys : 65535), unsigned(n));
  auto st = cudaStream_t(stream);
  const bool to_float = out_type != in_type;
  if (to_float && out_type != DType::kF32) return int(cudaErrorInvalidValue);
  switch (in_type) {
    case DType::kU8:
      return launch<uint8_t>(samples, to_float, grid, block, st);
    case DType::kI8:
      return launch<int8_t>(samples, to_float, grid, block, st);
    case DType::kU16:
      return launch<uint16_t>(samples, to_float, grid, block, st);
    case DType::kI16:
      return launch<int16_t>(samples, to_float, grid, block, st);
    case DType::kF16:
      return launch<Half>(samples, to_float, grid, block, st);
    case DType::kF32:
      return launch<float>(samples, false, grid, block, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
