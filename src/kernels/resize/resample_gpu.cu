#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "stoker/kernels/resize/resample_gpu.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
__device__ __forceinline__ float load(const T* p) {
  return float(*p);
}

// Round half away from zero and saturate (NaN -> 0), as convert_sat on the host.
template <typename T>
struct Limits;  // std::numeric_limits is host-only without --expt-relaxed-constexpr
template <>
struct Limits<uint8_t> {
  static constexpr float lo = 0.f, hi = 255.f;
};
template <>
struct Limits<int8_t> {
  static constexpr float lo = -128.f, hi = 127.f;
};
template <>
struct Limits<uint16_t> {
  static constexpr float lo = 0.f, hi = 65535.f;
};
template <>
struct Limits<int16_t> {
  static constexpr float lo = -32768.f, hi = 32767.f;
};

template <typename T>
__device__ __forceinline__ T store_value(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    if (!(v == v)) return T(0);
    const float r = roundf(v);
    constexpr float lo = Limits<T>::lo, hi = Limits<T>::hi;
    return T(r <= lo ? lo : r >= hi ? hi : r);
  }
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
      float v = 0.f;
      if (ch < C) {
        const int k = min(ch, kResampleMaxChannels - 1);
        float a = acc[c];
        if (p.mid_round) a = fminf(fmaxf(roundf(a), p.mid_lo), p.mid_hi);
        v = outside ? p.fill[k] : (a - p.mean[k]) * p.inv_std[k] + p.shift;
      }
      const int64_t o = p.planar ? int64_t(ch) * plane + int64_t(y) * s.out_w + x
                                 : (int64_t(y) * s.out_w + x) * OC + ch;
      out[o] = store_value<Out>(v);
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

// One thread per pixel (all its channels): no 64-bit divisions per element (the first
// version's two per byte made a flip of 256 ImageNet-size images ~1 ms on the H100).
template <typename T>
__global__ void flip_kernel(const FlipGpuSample* __restrict__ samples) {
  const FlipGpuSample& s = samples[blockIdx.z];
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);          // pixel in the row
  const int64_t r = int64_t(blockIdx.y) * blockDim.y + threadIdx.y;  // row over all planes
  const int w = int(s.w), channels = int(s.channels);
  if (x >= w || r >= s.planes * s.h) return;
  int64_t src_row = r;
  if (s.vertical) {  // each plane's rows reversed
    const int64_t plane = s.planes == 1 ? 0 : r / s.h;
    src_row = plane * s.h + (s.h - 1 - (r - plane * s.h));
  }
  const int sx = s.horizontal ? w - 1 - x : x;
  const T* in = static_cast<const T*>(s.in) + (src_row * w + sx) * channels;
  T* out = static_cast<T*>(s.out) + (r * w + x) * channels;
  for (int c = 0; c < channels; ++c) out[c] = in[c];
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

int flip_gpu(const FlipGpuSample* samples, int n, int64_t max_rows, int64_t max_w, int element_size,
             StreamHandle stream) {
  if (n == 0 || max_rows == 0 || max_w == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const dim3 block(64, 4);
  const dim3 grid(unsigned((max_w + 63) / 64), unsigned((max_rows + 3) / 4), unsigned(n));
  auto s = cudaStream_t(stream);
  switch (element_size) {
    case 1:
      flip_kernel<uint8_t><<<grid, block, 0, s>>>(samples);
      break;
    case 2:
      flip_kernel<uint16_t><<<grid, block, 0, s>>>(samples);
      break;
    case 4:
      flip_kernel<uint32_t><<<grid, block, 0, s>>>(samples);
      break;
    case 8:
      flip_kernel<uint64_t><<<grid, block, 0, s>>>(samples);
      break;
    default:
      return int(cudaErrorInvalidValue);
  }
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
