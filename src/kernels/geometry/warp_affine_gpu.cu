#include <cuda_runtime.h>

#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/float_rn.hpp"
#include "stoker/kernels/geometry/warp_affine_cpu.hpp"
#include "stoker/kernels/geometry/warp_affine_gpu.hpp"

namespace stoker::kernels {
namespace {

struct Fill {
  float v[kWarpMaxChannels];
  int used;  // 0: clamp to the border
};

template <typename T>
__device__ __forceinline__ T store(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    return to_int_saturated<T>(v);
  }
}

// One thread per output pixel and all its channels (kC of them, or `channels` when kC is 0).
// The grid covers a tile of the typical sample (the caller's grid size, e.g. the mean); each
// block then walks its sample's tiles, so one large image in a batch does not launch
// max-size tiles of idle threads for every sample (3x the work of a batch of ImageNet-size
// images with a few larger ones, on the H100). The map is evaluated in double, as the CPU
// kernel does (the same source pixel near ties); offsets within a row are 32-bit.
template <typename In, typename Out, int kC, bool kLinear>
__global__ void warp_kernel(const WarpGpuSample* __restrict__ samples, int channels, Fill fill) {
  const WarpGpuSample s = samples[blockIdx.z];
  const int C = kC ? kC : channels;
  const int h = int(s.h), w = int(s.w), oh = int(s.oh), ow = int(s.ow);
  const In* __restrict__ in = static_cast<const In*>(s.in);
  Out* __restrict__ out = static_cast<Out*>(s.out);
  for (int y = int(blockIdx.y * blockDim.y + threadIdx.y); y < oh; y += gridDim.y * blockDim.y) {
    for (int x = int(blockIdx.x * blockDim.x + threadIdx.x); x < ow; x += gridDim.x * blockDim.x) {
      Out* o = out + (int64_t(y) * ow + x) * C;
      const double px = x + 0.5, py = y + 0.5;
      // Rounded step by step as the CPU computes it (no fused multiply-adds): nearest-neighbour
      // sampling picks the CPU's pixel at ties too, which label maps need exactly.
      const double sx = add_rn(add_rn(mul_rn(s.m[0], px), mul_rn(s.m[1], py)), s.m[2]);
      const double sy = add_rn(add_rn(mul_rn(s.m[3], px), mul_rn(s.m[4], py)), s.m[5]);
      // Taps outside the image take the fill value, or the border pixel (clamped) without one.
      auto clamp_to = [](int64_t v, int size) { return int(v < 0 ? 0 : v >= size ? size - 1 : v); };
      auto value = [&](const In* row, int col, bool filled, int c) -> float {
        return filled ? fill.v[c < kWarpMaxChannels ? c : kWarpMaxChannels - 1]
                      : float(row[col + c]);
      };
      if constexpr (!kLinear) {
        const int64_t ix = int64_t(floor(sx)), iy = int64_t(floor(sy));
        const bool f = fill.used && (ix < 0 || iy < 0 || ix >= w || iy >= h);
        const In* row = in + int64_t(clamp_to(iy, h)) * w * C;
        const int col = clamp_to(ix, w) * C;
        for (int c = 0; c < C; ++c) o[c] = store<Out>(value(row, col, f, c));
      } else {
        const double fx = sx - 0.5, fy = sy - 0.5;
        const double x0 = floor(fx), y0 = floor(fy);
        const float ax = float(fx - x0), ay = float(fy - y0);
        const int64_t ix = int64_t(x0), iy = int64_t(y0);
        const bool out_x0 = ix < 0 || ix >= w, out_x1 = ix + 1 < 0 || ix + 1 >= w;
        const bool out_y0 = iy < 0 || iy >= h, out_y1 = iy + 1 < 0 || iy + 1 >= h;
        const bool f00 = fill.used && (out_x0 || out_y0), f10 = fill.used && (out_x1 || out_y0);
        const bool f01 = fill.used && (out_x0 || out_y1), f11 = fill.used && (out_x1 || out_y1);
        const In* r0 = in + int64_t(clamp_to(iy, h)) * w * C;
        const In* r1 = in + int64_t(clamp_to(iy + 1, h)) * w * C;
        const int c0 = clamp_to(ix, w) * C, c1 = clamp_to(ix + 1, w) * C;
        for (int c = 0; c < C; ++c) {
          const float top = value(r0, c0, f00, c) * (1 - ax) + value(r0, c1, f10, c) * ax;
          const float bot = value(r1, c0, f01, c) * (1 - ax) + value(r1, c1, f11, c) * ax;
          o[c] = store<Out>(top * (1 - ay) + bot * ay);
        }
      }
    }
  }
}

template <typename In, typename Out, int kC>
void launch_c(const WarpGpuSample* samples, dim3 grid, int C, bool linear, const Fill& fill,
              cudaStream_t stream) {
  const dim3 block(32, 8);
  if (linear)
    warp_kernel<In, Out, kC, true><<<grid, block, 0, stream>>>(samples, C, fill);
  else
    warp_kernel<In, Out, kC, false><<<grid, block, 0, stream>>>(samples, C, fill);
}

template <typename In, typename Out>
int launch(const WarpGpuSample* samples, int n, int64_t grid_h, int64_t grid_w, int C, bool linear,
           const Fill& fill, cudaStream_t stream) {
  const dim3 grid(unsigned((grid_w + 31) / 32), unsigned((grid_h + 7) / 8), unsigned(n));
  if (C == 3)
    launch_c<In, Out, 3>(samples, grid, C, linear, fill, stream);
  else if (C == 1)
    launch_c<In, Out, 1>(samples, grid, C, linear, fill, stream);
  else
    launch_c<In, Out, 0>(samples, grid, C, linear, fill, stream);
  return int(cudaGetLastError());
}

}  // namespace

int warp_affine_gpu(const WarpGpuSample* samples, int n, int64_t grid_h, int64_t grid_w,
                    int channels, bool linear, const float* fill, DType in_type, DType out_type,
                    StreamHandle stream) {
  if (n == 0 || grid_h <= 0 || grid_w <= 0) return 0;
  if (n > 65535 || (fill && channels > kWarpMaxChannels)) return int(cudaErrorInvalidValue);
  grid_h = grid_h < 65535 * 8 ? grid_h : 65535 * 8;
  Fill f{};
  f.used = fill != nullptr;
  for (int c = 0; fill && c < channels; ++c) f.v[c] = fill[c];
  auto s = cudaStream_t(stream);
  int err = int(cudaErrorInvalidValue);
  visit_warp_pairs(in_type, out_type, [&](auto i, auto o) {
    err = launch<decltype(i), decltype(o)>(samples, n, grid_h, grid_w, channels, linear, f, s);
  });
  return err;
}

}  // namespace stoker::kernels
