#include <cuda_runtime.h>

#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/geometry/displacement_gpu.hpp"

namespace stoker::kernels {
namespace {

// One thread per output pixel and all its channels (kC of them, or `channels` when kC is 0).
// The grid covers a tile of the typical sample; each block walks its sample's tiles (as
// warp_affine_gpu), so one large image does not launch idle threads for every other sample.
template <typename T, int kC, DisplaceMap kMap, bool kLinear>
__global__ void displace_kernel(const DisplaceSample* __restrict__ samples, int channels) {
  const DisplaceSample s = samples[blockIdx.z];
  const int64_t C = kC ? kC : channels;
  const T* __restrict__ in = static_cast<const T*>(s.in);
  T* __restrict__ out = static_cast<T*>(s.out);
  for (int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < s.h; y += gridDim.y * blockDim.y) {
    for (int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < s.w; x += gridDim.x * blockDim.x) {
      T* o = out + (y * s.w + x) * C;
      if (!s.apply) {  // DALI's mask = 0: a copy
        for (int64_t c = 0; c < C; ++c) o[c] = in[(y * s.w + x) * C + c];
        continue;
      }
      float sx = 0, sy = 0;
      if constexpr (kMap == DisplaceMap::kWater) {
        sx = add_rn(float(x), s.dx[y]), sy = add_rn(float(y), s.dy[x]);
      } else {
        sphere_point(x, y, s.h, s.w, sx, sy);
      }
      if (!sample_point_ok(sx) || !sample_point_ok(sy)) {
        const bool nan = kLinear && (is_nan(sx) || is_nan(sy));
        for (int64_t c = 0; c < C; ++c) o[c] = nan ? store_float<T>(sx + sy) : T(s.fill);
        continue;
      }
      if constexpr (!kLinear) {
        const int64_t ix = floor_i64(sx), iy = floor_i64(sy);
        const bool inside = ix >= 0 && iy >= 0 && ix < s.w && iy < s.h;
        for (int64_t c = 0; c < C; ++c) o[c] = inside ? in[(iy * s.w + ix) * C + c] : T(s.fill);
      } else {
        const LinearTaps t = linear_taps(sx, sy);
        for (int64_t c = 0; c < C; ++c) {
          const float v =
              linear_mix(displace_tap(in, s.h, s.w, C, t.x0, t.y0, c, s.fill),
                         displace_tap(in, s.h, s.w, C, t.x0 + 1, t.y0, c, s.fill),
                         displace_tap(in, s.h, s.w, C, t.x0, t.y0 + 1, c, s.fill),
                         displace_tap(in, s.h, s.w, C, t.x0 + 1, t.y0 + 1, c, s.fill), t);
          o[c] = store_float<T>(v);
        }
      }
    }
  }
}

template <typename T, int kC>
__global__ void grid_mask_kernel(const GridMaskSample* __restrict__ samples, int channels) {
  const GridMaskSample s = samples[blockIdx.z];
  const int64_t C = kC ? kC : channels;
  const T* __restrict__ in = static_cast<const T*>(s.in);
  T* __restrict__ out = static_cast<T*>(s.out);
  for (int64_t y = blockIdx.y * blockDim.y + threadIdx.y; y < s.h; y += gridDim.y * blockDim.y)
    for (int64_t x = blockIdx.x * blockDim.x + threadIdx.x; x < s.w; x += gridDim.x * blockDim.x) {
      const bool keep = grid_mask_keep(s, x, y);
      const int64_t at = (y * s.w + x) * C;
      for (int64_t c = 0; c < C; ++c) out[at + c] = keep ? in[at + c] : T(0);
    }
}

dim3 grid_of(int n, int64_t grid_h, int64_t grid_w) {
  grid_h = grid_h < 65535 * 8 ? grid_h : 65535 * 8;
  grid_w = grid_w < int64_t(1) << 30 ? grid_w : int64_t(1) << 30;
  return dim3(unsigned((grid_w + 31) / 32), unsigned((grid_h + 7) / 8), unsigned(n));
}

template <typename T, int kC>
void launch_displace(const DisplaceSample* samples, dim3 grid, int C, DisplaceMap map, bool linear,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  if (map == DisplaceMap::kWater) {
    if (linear)
      displace_kernel<T, kC, DisplaceMap::kWater, true><<<grid, block, 0, stream>>>(samples, C);
    else
      displace_kernel<T, kC, DisplaceMap::kWater, false><<<grid, block, 0, stream>>>(samples, C);
  } else {
    if (linear)
      displace_kernel<T, kC, DisplaceMap::kSphere, true><<<grid, block, 0, stream>>>(samples, C);
    else
      displace_kernel<T, kC, DisplaceMap::kSphere, false><<<grid, block, 0, stream>>>(samples, C);
  }
}

template <typename F>
bool visit_displace_types(DType type, F&& f) {
  return visit_types<DType::kU8, DType::kF32>(type, f);
}

template <typename F>
bool visit_grid_mask_types(DType type, F&& f) {
  return visit_types<DType::kU8, DType::kI16, DType::kI32, DType::kF32>(type, f);
}

}  // namespace

int displace_gpu(const DisplaceSample* samples, int n, int64_t grid_h, int64_t grid_w, int channels,
                 DisplaceMap map, bool linear, DType type, StreamHandle stream) {
  if (n == 0 || grid_h <= 0 || grid_w <= 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidValue);
  const dim3 grid = grid_of(n, grid_h, grid_w);
  auto s = cudaStream_t(stream);
  int err = int(cudaErrorInvalidValue);
  visit_displace_types(type, [&](auto t) {
    using T = decltype(t);
    if (channels == 3)
      launch_displace<T, 3>(samples, grid, channels, map, linear, s);
    else if (channels == 1)
      launch_displace<T, 1>(samples, grid, channels, map, linear, s);
    else
      launch_displace<T, 0>(samples, grid, channels, map, linear, s);
    err = int(cudaGetLastError());
  });
  return err;
}

bool displace_gpu_supports(DType type) {
  return visit_displace_types(type, [](auto) {});
}

int grid_mask_gpu(const GridMaskSample* samples, int n, int64_t grid_h, int64_t grid_w,
                  int channels, DType type, StreamHandle stream) {
  if (n == 0 || grid_h <= 0 || grid_w <= 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidValue);
  const dim3 grid = grid_of(n, grid_h, grid_w), block(32, 8);
  auto s = cudaStream_t(stream);
  int err = int(cudaErrorInvalidValue);
  visit_grid_mask_types(type, [&](auto t) {
    using T = decltype(t);
    if (channels == 3)
      grid_mask_kernel<T, 3><<<grid, block, 0, s>>>(samples, channels);
    else if (channels == 1)
      grid_mask_kernel<T, 1><<<grid, block, 0, s>>>(samples, channels);
    else
      grid_mask_kernel<T, 0><<<grid, block, 0, s>>>(samples, channels);
    err = int(cudaGetLastError());
  });
  return err;
}

bool grid_mask_gpu_supports(DType type) {
  return visit_grid_mask_types(type, [](auto) {});
}

}  // namespace stoker::kernels
