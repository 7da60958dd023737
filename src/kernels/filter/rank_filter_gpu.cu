#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>

#include "stoker/kernels/filter/rank_filter_gpu.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
__device__ __forceinline__ uint32_t neutral_key(RankOp op) {
  // rank_border_fill's values (numeric_limits is host-only here).
  if constexpr (std::is_same_v<T, float>) {
    return rank_key(op == RankOp::kDilate ? FLT_MIN : FLT_MAX);
  } else {
    return op == RankOp::kDilate ? 0u : uint32_t(T(~T(0)));
  }
}

// The window's key at (i, j) for output (y, x, c).
template <typename T>
__device__ __forceinline__ uint32_t window_key(const T* src, const RankShape& s, int64_t y,
                                               int64_t x, int64_t c, int i, int j, uint32_t fill) {
  const int64_t sy = border_index(y - s.ay + i, s.height, s.border);
  const int64_t sx = border_index(x - s.ax + j, s.width, s.border);
  if (sy < 0 || sx < 0) return fill;
  return rank_key(src[(sy * s.width + sx) * s.channels + c]);
}

// Pass `pass` of `iterations`: the source is the input or the buffer the previous pass wrote;
// the buffers alternate so that the last pass writes the output (as rank_filter_cpu).
template <typename T>
__global__ void rank_pass(const RankGpuSample* __restrict__ samples, RankOp op, int pass,
                          int iterations) {
  const RankGpuSample& d = samples[blockIdx.y];
  const RankShape& s = d.shape;
  const int64_t plane = s.height * s.width * s.channels;
  const int64_t total = s.planes * plane;
  const bool to_out = (iterations - pass) % 2 == 1;
  const T* src =
      pass == 0 ? static_cast<const T*>(d.in) : static_cast<const T*>(to_out ? d.tmp : d.out);
  T* dst = static_cast<T*>(to_out ? d.out : d.tmp);
  const uint32_t fill = neutral_key<T>(op);
  const int64_t n = int64_t(s.kh) * s.kw;
  constexpr int kBits = std::is_same_v<T, float> ? 32 : 8 * int(sizeof(T));
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t p = e / plane, r = e % plane;
    const int64_t c = r % s.channels, x = (r / s.channels) % s.width,
                  y = r / (s.channels * s.width);
    const T* sp = src + p * plane;
    uint32_t best;
    if (op == RankOp::kMedian) {
      // The smallest key with more than n / 2 window values at or below it.
      uint64_t lo = 0, hi = kBits == 32 ? 0xffffffffull : (1ull << kBits) - 1;
      while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        int64_t count = 0;
        for (int i = 0; i < s.kh; ++i)
          for (int j = 0; j < s.kw; ++j)
            count += window_key(sp, s, y, x, c, i, j, fill) <= uint32_t(mid);
        if (count > n / 2)
          hi = mid;
        else
          lo = mid + 1;
      }
      best = uint32_t(lo);
    } else {
      best = fill;  // CV-CUDA's start (rank_filter.hpp)
      for (int i = 0; i < s.kh; ++i)
        for (int j = 0; j < s.kw; ++j) {
          const uint32_t k = window_key(sp, s, y, x, c, i, j, fill);
          best = op == RankOp::kDilate ? (k > best ? k : best) : (k < best ? k : best);
        }
    }
    dst[p * plane + r] = rank_value<T>(best);
  }
}

template <typename T>
int launch(const RankGpuSample* samples, int n, int64_t max_elems, RankOp op, int iterations,
           cudaStream_t st) {
  const dim3 block(256);
  const dim3 grid(unsigned(std::min<int64_t>((max_elems + 255) / 256, 65535)), unsigned(n));
  for (int pass = 0; pass < iterations; ++pass) {
    rank_pass<T><<<grid, block, 0, st>>>(samples, op, pass, iterations);
    if (int e = int(cudaGetLastError())) return e;
  }
  return 0;
}

}  // namespace

int rank_filter_gpu(const RankGpuSample* samples, int n, int64_t max_elems, DType type, RankOp op,
                    int iterations, StreamHandle stream) {
  if (n == 0 || max_elems == 0 || iterations < 1) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  auto st = cudaStream_t(stream);
  switch (type) {
    case DType::kU8:
      return launch<uint8_t>(samples, n, max_elems, op, iterations, st);
    case DType::kU16:
      return launch<uint16_t>(samples, n, max_elems, op, iterations, st);
    case DType::kF32:
      return launch<float>(samples, n, max_elems, op, iterations, st);
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace stoker::kernels
