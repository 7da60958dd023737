// coord_transform's map, out = M v + T for each point of n components (1-6) into m (1-6), in
// float32 with DALI's order of the sums (M v first, then + T), each operation rounded once so
// that the GPU (coord_transform_gpu.cu) equals the CPU bit for bit.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

constexpr int kCoordMaxComponents = 6;

struct CoordTransformSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t points = 0;
  int32_t rows = 0, cols = 0;                               // m, n
  float m[kCoordMaxComponents * kCoordMaxComponents] = {};  // rows x cols, row-major
  float t[kCoordMaxComponents] = {};
};

// One point: v (cols components) to out (rows).
STOKER_HOST_DEVICE inline void coord_transform_point(const CoordTransformSample& s, const float* v,
                                                     float* out) {
  for (int32_t r = 0; r < s.rows; ++r) {
    float acc = 0.f;
    for (int32_t c = 0; c < s.cols; ++c) acc = add_rn(acc, mul_rn(s.m[r * s.cols + c], v[c]));
    out[r] = add_rn(acc, s.t[r]);
  }
}

template <typename Out, typename In>
void coord_transform_cpu(const CoordTransformSample& s) {
  const In* src = static_cast<const In*>(s.in);
  Out* dst = static_cast<Out*>(s.out);
  float v[kCoordMaxComponents], o[kCoordMaxComponents];
  for (int64_t p = 0; p < s.points; ++p, src += s.cols, dst += s.rows) {
    for (int32_t c = 0; c < s.cols; ++c) v[c] = cast_value<float>(src[c]);
    coord_transform_point(s, v, o);
    for (int32_t r = 0; r < s.rows; ++r) dst[r] = cast_value<Out>(o[r]);
  }
}

// `samples`: a device array of n. in: bool, 8-64-bit integers, float32 or float64; out:
// 8-32-bit integers, float32 or float64. Returns the CUDA error of the launch (0: none; an
// unsupported dtype: cudaErrorInvalidValue).
int coord_transform_gpu(const CoordTransformSample* samples, int n, int64_t max_points, DType in,
                        DType out, StreamHandle stream);
// Whether coord_transform_gpu takes in -> out.
bool coord_transform_gpu_supports(DType in, DType out);

}  // namespace stoker::kernels
