#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/geometry/multi_paste.hpp"

namespace stoker::kernels {
namespace {

// cast_value's rules for the types multi_paste takes (none wider than 32 bits).
template <typename Out, typename In>
__device__ __forceinline__ Out convert(In v) {
  if constexpr (std::is_floating_point_v<Out>) {
    return Out(v);
  } else if constexpr (std::is_floating_point_v<In>) {
    return to_int_saturated<Out>(double(v));
  } else {
    const int64_t x = int64_t(v);
    return Out(x < int64_t(IntRange<Out>::lo)   ? int64_t(IntRange<Out>::lo)
               : x > int64_t(IntRange<Out>::hi) ? int64_t(IntRange<Out>::hi)
                                                : x);
  }
}

template <typename Out, typename In>
__global__ void multi_paste_kernel(const MultiPasteSample* __restrict__ samples,
                                   const PasteRegion* __restrict__ regions) {
  const MultiPasteSample s = samples[blockIdx.y];
  Out* out = static_cast<Out*>(s.out);
  const int64_t pixels = s.h * s.w, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += step) {
    const int64_t y = p / s.w, x = p % s.w;
    const In* src = nullptr;
    for (int32_t k = s.first + s.count - 1; k >= s.first; --k) {  // the last region on top
      const PasteRegion& r = regions[k];
      const int64_t ry = y - r.out_y, rx = x - r.out_x;
      if (ry >= 0 && ry < r.h && rx >= 0 && rx < r.w) {
        src = static_cast<const In*>(r.in) + ((r.in_y + ry) * r.in_width + r.in_x + rx) * s.c;
        break;
      }
    }
    Out* dst = out + p * s.c;
    for (int64_t c = 0; c < s.c; ++c) dst[c] = src ? convert<Out>(src[c]) : Out(0);
  }
}

}  // namespace

int multi_paste_gpu(const MultiPasteSample* samples, const PasteRegion* regions, int n,
                    int64_t max_pixels, DType in, DType out, StreamHandle stream) {
  if (n == 0 || max_pixels == 0) return 0;
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_pixels + block - 1) / block, 1024)), unsigned(n));
  bool known = false;
  visit_types<DType::kU8, DType::kU16, DType::kI16, DType::kI32, DType::kF32>(in, [&](auto i) {
    known = visit_types<DType::kU8, DType::kU16, DType::kI16, DType::kI32, DType::kF32>(
        out, [&](auto o) {
          multi_paste_kernel<decltype(o), decltype(i)>
              <<<grid, block, 0, cudaStream_t(stream)>>>(samples, regions);
        });
  });
  return known ? int(cudaGetLastError()) : int(cudaErrorInvalidValue);
}

}  // namespace stoker::kernels
