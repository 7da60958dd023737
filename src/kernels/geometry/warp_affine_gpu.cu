#include <cuda_runtime.h>

#include <type_traits>

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
    constexpr float lo = std::is_same_v<T, uint8_t>    ? 0.f
                         : std::is_same_v<T, uint16_t> ? 0.f
                                                       : -32768.f;
    constexpr float hi = std::is_same_v<T, uint8_t>    ? 255.f
                         : std::is_same_v<T, uint16_t> ? 65535.f
                                                       : 32767.f;
    if (!(v == v)) return T(0);
    const float r = roundf(v);
    return T(r <= lo ? lo : r >= hi ? hi : r);
  }
}

template <typename T, bool kLinear>
__global__ void warp_kernel(const WarpGpuSample* __restrict__ samples, int C, Fill fill) {
  const WarpGpuSample& s = samples[blockIdx.z];
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = int(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= s.ow || y >= s.oh) return;
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out) + (int64_t(y) * s.ow + x) * C;
  // As the CPU kernel: the map in double, taps in float.
  const double px = x + 0.5, py = y + 0.5;
  const double sx = s.m[0] * px + s.m[1] * py + s.m[2];
  const double sy = s.m[3] * px + s.m[4] * py + s.m[5];
  // A tap's element offset, or -1 outside the image with a fill (resolved once per pixel,
  // not per channel).
  auto offset = [&](int64_t tx, int64_t ty) -> int64_t {
    if (tx < 0 || ty < 0 || tx >= s.w || ty >= s.h) {
      if (fill.used) return -1;
      tx = tx < 0 ? 0 : tx >= s.w ? s.w - 1 : tx;
      ty = ty < 0 ? 0 : ty >= s.h ? s.h - 1 : ty;
    }
    return (ty * s.w + tx) * C;
  };
  auto tap = [&](int64_t o, int c) -> float {
    return o >= 0 ? float(in[o + c]) : fill.v[c < kWarpMaxChannels ? c : kWarpMaxChannels - 1];
  };
  if (!kLinear) {
    const int64_t o = offset(int64_t(floor(sx)), int64_t(floor(sy)));
    for (int c = 0; c < C; ++c) out[c] = store<T>(tap(o, c));
    return;
  }
  const double fx = sx - 0.5, fy = sy - 0.5;
  const int64_t x0 = int64_t(floor(fx)), y0 = int64_t(floor(fy));
  const float ax = float(fx - double(x0)), ay = float(fy - double(y0));
  const int64_t o00 = offset(x0, y0), o10 = offset(x0 + 1, y0);
  const int64_t o01 = offset(x0, y0 + 1), o11 = offset(x0 + 1, y0 + 1);
  for (int c = 0; c < C; ++c) {
    const float top = tap(o00, c) * (1 - ax) + tap(o10, c) * ax;
    const float bot = tap(o01, c) * (1 - ax) + tap(o11, c) * ax;
    out[c] = store<T>(top * (1 - ay) + bot * ay);
  }
}

template <typename T>
int launch(const WarpGpuSample* samples, int n, int64_t oh, int64_t ow, int C, bool linear,
           const Fill& fill, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid(unsigned((ow + 31) / 32), unsigned((oh + 7) / 8), unsigned(n));
  if (linear)
    warp_kernel<T, true><<<grid, block, 0, stream>>>(samples, C, fill);
  else
    warp_kernel<T, false><<<grid, block, 0, stream>>>(samples, C, fill);
  return int(cudaGetLastError());
}

}  // namespace

int warp_affine_gpu(const WarpGpuSample* samples, int n, int64_t max_oh, int64_t max_ow,
                    int channels, bool linear, const float* fill, DType type, StreamHandle stream) {
  if (n == 0 || max_oh == 0 || max_ow == 0) return 0;
  if (n > 65535 || (fill && channels > kWarpMaxChannels)) return int(cudaErrorInvalidValue);
  Fill f{};
  f.used = fill != nullptr;
  for (int c = 0; fill && c < channels; ++c) f.v[c] = fill[c];
  auto s = cudaStream_t(stream);
  switch (type) {
    case DType::kU8:
      return launch<uint8_t>(samples, n, max_oh, max_ow, channels, linear, f, s);
    case DType::kI16:
      return launch<int16_t>(samples, n, max_oh, max_ow, channels, linear, f, s);
    case DType::kU16:
      return launch<uint16_t>(samples, n, max_oh, max_ow, channels, linear, f, s);
    case DType::kF32:
      return launch<float>(samples, n, max_oh, max_ow, channels, linear, f, s);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
