#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/resize/resample_gpu.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
__device__ __forceinline__ float load(const T* p) {
  return float(*p);
}

template <typename In, typename Out>
__global__ void resample_kernel(const ResampleGpuSample* __restrict__ samples, ResampleGpuParams p,
                                ResampleGpuTables t) {
  const ResampleGpuSample& s = samples[blockIdx.z];
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= s.out_w || y >= s.out_h) return;
  const int sx = s.mirror_x ? s.out_w - 1 - x : x;
  const int sy = s.mirror_y ? s.out_h - 1 - y : y;
  const int fx = t.first[s.x_entry + sx], nx = t.count[s.x_entry + sx];
  const int fy = t.first[s.y_entry + sy], ny = t.count[s.y_entry + sy];
  const float* wx = t.weights + s.x_weight + int64_t(sx) * s.support_x;
  const float* wy = t.weights + s.y_weight + int64_t(sy) * s.support_y;
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int C = p.channels, OC = p.out_channels;
  const int64_t row_elems = s.in_stride;
  const bool outside = nx == 0 || ny == 0;
  const int64_t plane = int64_t(s.out_h) * s.out_w;
  for (int c0 = 0; c0 < OC; c0 += 4) {
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    const int cn = min(4, C - c0);
    if (!outside && cn > 0) {
      for (int ky = 0; ky < ny; ++ky) {
        const In* row = in + int64_t(fy + ky) * row_elems + int64_t(fx) * C + c0;
        float h[4] = {0.f, 0.f, 0.f, 0.f};
        for (int kx = 0; kx < nx; ++kx) {
          const float w = wx[kx];
          const In* px = row + int64_t(kx) * C;
#pragma unroll
          for (int c = 0; c < 4; ++c)
            if (c < cn) h[c] += w * load(px + c);
        }
        const float w = wy[ky];
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[c] += w * h[c];
      }
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int ch = c0 + c;
      if (ch >= OC) break;
      float v = p.fill[min(ch, kResampleMaxChannels - 1)];  // pad_output's channels
      if (ch < C) {
        const int k = min(ch, kResampleMaxChannels - 1);
        float a = acc[c];
        if (p.mid_round) a = fminf(fmaxf(roundf(a), p.mid_lo), p.mid_hi);
        v = outside ? p.fill[k] : (a - p.mean[k]) * p.inv_std[k] + p.shift;
      }
      const int64_t o = p.planar ? int64_t(ch) * plane + int64_t(y) * s.out_w + x
                                 : (int64_t(y) * s.out_w + x) * OC + ch;
      out[o] = store_float<Out>(v);
    }
  }
}

template <typename In, typename Out>
int launch(const ResampleGpuSample* samples, int n, int64_t max_h, int64_t max_w,
           const ResampleGpuParams& p, const ResampleGpuTables& t, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid(unsigned((max_w + 31) / 32), unsigned((max_h + 7) / 8), unsigned(n));
  resample_kernel<In, Out><<<grid, block, 0, stream>>>(samples, p, t);
  return int(cudaGetLastError());
}

template <typename In>
int dispatch_out(const ResampleGpuSample* samples, int n, int64_t h, int64_t w,
                 const ResampleGpuParams& p, const ResampleGpuTables& t, cudaStream_t stream) {
  switch (p.out_type) {
    case DType::kU8:
      return launch<In, uint8_t>(samples, n, h, w, p, t, stream);
    case DType::kI8:
      return launch<In, int8_t>(samples, n, h, w, p, t, stream);
    case DType::kU16:
      return launch<In, uint16_t>(samples, n, h, w, p, t, stream);
    case DType::kI16:
      return launch<In, int16_t>(samples, n, h, w, p, t, stream);
    case DType::kF16:
      return launch<In, __half>(samples, n, h, w, p, t, stream);
    case DType::kF32:
      return launch<In, float>(samples, n, h, w, p, t, stream);
    default:
      return int(cudaErrorInvalidValue);
  }
}

// One thread per pixel (all its channels), each sample's pixels as one range that its blocks
// (blockIdx.y: the sample) stride over: a batch with a few large images does not launch
// max-size grids of idle threads for every sample, and indices are 32-bit unless a sample
// needs more (2x faster than a 2-D grid of the largest sample's size on the H100).
template <typename T, int kC, typename Index>
__global__ void flip_kernel(const FlipGpuSample* __restrict__ samples) {
  const FlipGpuSample s = samples[blockIdx.y];
  const Index w = Index(s.w), h = Index(s.h), rows = Index(s.planes) * h;
  const int C = kC ? kC : int(s.channels);
  const Index total = rows * w;
  const T* __restrict__ in = static_cast<const T*>(s.in);
  T* __restrict__ out = static_cast<T*>(s.out);
  for (Index p = Index(blockIdx.x) * blockDim.x + threadIdx.x; p < total;
       p += Index(gridDim.x) * blockDim.x) {
    const Index r = p / w, x = p - r * w;
    Index src_row = r;
    if (s.vertical) {  // each plane's rows reversed
      const Index plane = s.planes == 1 ? 0 : r / h;
      src_row = plane * h + (h - 1 - (r - plane * h));
    }
    const Index sx = s.horizontal ? w - 1 - x : x;
    const T* i = in + (src_row * w + sx) * C;
    T* o = out + p * C;
    for (int c = 0; c < C; ++c) o[c] = i[c];
  }
}

template <typename T>
void launch_flip(const FlipGpuSample* samples, dim3 grid, bool three, bool large, cudaStream_t s) {
  if (large) {
    if (three)
      flip_kernel<T, 3, int64_t><<<grid, 256, 0, s>>>(samples);
    else
      flip_kernel<T, 0, int64_t><<<grid, 256, 0, s>>>(samples);
  } else if (three) {
    flip_kernel<T, 3, int><<<grid, 256, 0, s>>>(samples);
  } else {
    flip_kernel<T, 0, int><<<grid, 256, 0, s>>>(samples);
  }
}

}  // namespace

int resample_gpu(const ResampleGpuSample* samples, int n, int64_t max_out_h, int64_t max_out_w,
                 const ResampleGpuParams& params, const ResampleGpuTables& tables,
                 StreamHandle stream) {
  if (n == 0 || max_out_h == 0 || max_out_w == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  auto s = cudaStream_t(stream);
  switch (params.in_type) {
    case DType::kU8:
      return dispatch_out<uint8_t>(samples, n, max_out_h, max_out_w, params, tables, s);
    case DType::kU16:
      return dispatch_out<uint16_t>(samples, n, max_out_h, max_out_w, params, tables, s);
    case DType::kI16:
      return dispatch_out<int16_t>(samples, n, max_out_h, max_out_w, params, tables, s);
    case DType::kF32:
      return dispatch_out<float>(samples, n, max_out_h, max_out_w, params, tables, s);
    default:
      return int(cudaErrorInvalidValue);
  }
}

int flip_gpu(const FlipGpuSample* samples, int n, int64_t mean_pixels, int64_t max_elements,
             bool all_three_channels, int element_size, StreamHandle stream) {
  if (n == 0 || mean_pixels <= 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  // About four pixels per thread for the mean sample.
  const int64_t blocks = (mean_pixels + 1023) / 1024;
  const dim3 grid(unsigned(blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks), unsigned(n));
  const bool large = max_elements >= (int64_t(1) << 31);
  auto s = cudaStream_t(stream);
  switch (element_size) {
    case 1:
      launch_flip<uint8_t>(samples, grid, all_three_channels, large, s);
      break;
    case 2:
      launch_flip<uint16_t>(samples, grid, all_three_channels, large, s);
      break;
    case 4:
      launch_flip<uint32_t>(samples, grid, all_three_channels, large, s);
      break;
    case 8:
      launch_flip<uint64_t>(samples, grid, all_three_channels, large, s);
      break;
    default:
      return int(cudaErrorInvalidValue);
  }
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
