#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/geometry/coord_transform.hpp"

namespace stoker::kernels {
namespace {

// cast_value<Out>(float) of the host (core/dtype.hpp): floats as they are, integers rounded
// half away from zero and saturated.
template <typename Out>
__device__ __forceinline__ Out from_float(float f) {
  if constexpr (std::is_floating_point_v<Out>) {
    return Out(f);
  } else {
    return to_int_saturated<Out>(double(f));
  }
}

template <typename Out, typename In>
__global__ void coord_transform_kernel(const CoordTransformSample* __restrict__ samples) {
  const CoordTransformSample& s = samples[blockIdx.y];
  const In* src = static_cast<const In*>(s.in);
  Out* dst = static_cast<Out*>(s.out);
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  float v[kCoordMaxComponents], o[kCoordMaxComponents];
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < s.points; p += step) {
    for (int32_t c = 0; c < s.cols; ++c) v[c] = float(src[p * s.cols + c]);
    coord_transform_point(s, v, o);
    for (int32_t r = 0; r < s.rows; ++r) dst[p * s.rows + r] = from_float<Out>(o[r]);
  }
}

// f(In{}, Out{}) for the types the kernel takes; false (calling nothing) for others.
template <typename F>
bool visit_coord_types(DType in, DType out, F&& f) {
  bool known = false;
  visit_types<DType::kBool, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8,
              DType::kI16, DType::kI32, DType::kI64, DType::kF32, DType::kF64>(in, [&](auto i) {
    known = visit_types<DType::kU8, DType::kU16, DType::kU32, DType::kI8, DType::kI16, DType::kI32,
                        DType::kF32, DType::kF64>(out, [&](auto o) { f(i, o); });
  });
  return known;
}

}  // namespace

bool coord_transform_gpu_supports(DType in, DType out) {
  return visit_coord_types(in, out, [](auto, auto) {});
}

int coord_transform_gpu(const CoordTransformSample* samples, int n, int64_t max_points, DType in,
                        DType out, StreamHandle stream) {
  const bool known = visit_coord_types(in, out, [&](auto i, auto o) {
    if (n == 0 || max_points == 0) return;
    const int block = 256;
    const dim3 grid(unsigned(std::min<int64_t>((max_points + block - 1) / block, 1024)),
                    unsigned(n));
    coord_transform_kernel<decltype(o), decltype(i)>
        <<<grid, block, 0, cudaStream_t(stream)>>>(samples);
  });
  return known ? int(cudaGetLastError()) : int(cudaErrorInvalidValue);
}

}  // namespace stoker::kernels
