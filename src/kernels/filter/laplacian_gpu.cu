#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "stoker/kernels/common/half_gpu.cuh"
#include "stoker/kernels/filter/border.hpp"
#include "stoker/kernels/filter/laplacian_gpu.hpp"

namespace stoker::kernels {
namespace {

using Half = HalfBits;

template <typename T>
__device__ __forceinline__ float load(const T* p, int64_t i) {
  return load_as_float(p, i);
}

// convert_sat's rule (core/dtype.hpp): rounded half away from zero, saturated by comparing in
// float (as the host does for every width), NaN to 0; RNE for float16.
template <typename T>
__device__ __forceinline__ T store(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, Half>) {
    return Half{__half_raw(__float2half_rn(v)).x};
  } else {
    if (!(v == v)) return T(0);
    constexpr T lo = std::is_signed_v<T> ? T(T(1) << (8 * sizeof(T) - 1)) : T(0);
    constexpr T hi = T(~lo);
    const float r = roundf(v);
    if (r <= float(lo)) return lo;
    if (r >= float(hi)) return hi;
    return T(r);
  }
}

// One pass of partial `i` along axis `a`: from the input (Src, the first pass) or a float
// buffer into a float buffer, one thread per element of the sample's planes.
template <typename Src>
__global__ void laplacian_pass(const LaplacianGpuSample* __restrict__ samples,
                               const float* __restrict__ windows, int i, int a, bool from_input,
                               bool into_a) {
  const LaplacianGpuSample& s = samples[blockIdx.y];
  const LaplacianShape& sh = s.shape;
  int64_t inner = sh.channels;
  for (int j = a + 1; j < sh.axes; ++j) inner *= sh.extent[j];
  const int64_t n = sh.extent[a];
  int64_t total = sh.planes * sh.channels;
  for (int j = 0; j < sh.axes; ++j) total *= sh.extent[j];
  const int taps = sh.window[i][a];
  const float* w =
      windows + ((a == i ? kLaplacianMaxWindow / 2 + 1 : 0) + taps / 2) * kLaplacianWindowSlots;
  const int r = taps / 2;
  // laplacian_partial's rule: float16 intermediates between separable passes, not after axis 0.
  const bool round_out = sh.half && a != 0 && !laplacian_single_pass(sh, i);
  float* dst = into_a ? s.a : s.b;
  const float* fsrc = into_a ? s.b : s.a;
  const Src* tsrc = static_cast<const Src*>(s.in);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t in_row = e % inner;
    const int64_t x = (e / inner) % n;
    const int64_t o = e / (inner * n);
    float acc = 0.f;
    for (int k = 0; k < taps; ++k) {
      const int64_t at = (o * n + reflect101(x - r + k, n)) * inner + in_row;
      const float v = from_input ? load(tsrc, at) : fsrc[at];
      // A size-1 window copies (the CPU skips it): exact, and no float16 product rounding of a
      // value the single pass of a partial left unrounded.
      const float p = taps == 1 ? v : __fmul_rn(v, w[k]);
      acc = __fadd_rn(acc, sh.half && taps != 1 ? half_round_away(p) : p);
    }
    dst[e] = round_out ? half_round_away(acc) : acc;
  }
}

// Sums partial `i` (in a or b) into acc; the last one stores the output.
template <typename Out>
__global__ void laplacian_sum(const LaplacianGpuSample* __restrict__ samples, int i, bool in_a,
                              bool last) {
  const LaplacianGpuSample& s = samples[blockIdx.y];
  const LaplacianShape& sh = s.shape;
  int64_t total = sh.planes * sh.channels;
  for (int j = 0; j < sh.axes; ++j) total *= sh.extent[j];
  const float* v = in_a ? s.a : s.b;
  const float scale = sh.scale[i];
  // laplacian_cpu's rule: DALI's float16 sum buffer, but for one axis and a float output.
  const bool round = sh.half && !(sh.axes == 1 && std::is_same_v<Out, float>);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const float t = __fmul_rn(v[e], scale);
    float sum = i == 0 ? t : __fadd_rn(t, s.acc[e]);
    if (round) sum = half_round_away(sum);
    if (last)
      static_cast<Out*>(s.out)[e] = store<Out>(sum);
    else
      s.acc[e] = sum;
  }
}

template <typename F>
int with_type(DType t, F&& f) {
  switch (t) {
    case DType::kU8:
      return f(uint8_t{});
    case DType::kI8:
      return f(int8_t{});
    case DType::kU16:
      return f(uint16_t{});
    case DType::kI16:
      return f(int16_t{});
    case DType::kU32:
      return f(uint32_t{});
    case DType::kI32:
      return f(int32_t{});
    case DType::kU64:
      return f(uint64_t{});
    case DType::kI64:
      return f(int64_t{});
    case DType::kF16:
      return f(Half{});
    case DType::kF32:
      return f(float{});
    default:
      return int(cudaErrorInvalidValue);
  }
}

}  // namespace

int laplacian_gpu(const LaplacianGpuSample* samples, const float* windows, int n, int axes,
                  int64_t max_elems, DType in_type, DType out_type, StreamHandle stream) {
  if (n == 0 || max_elems == 0) return 0;
  if (n > 65535 || axes < 1 || axes > 3) return int(cudaErrorInvalidConfiguration);
  auto st = cudaStream_t(stream);
  const dim3 block(256);
  const dim3 grid(unsigned(std::min<int64_t>((max_elems + 255) / 256, 65535)), unsigned(n));
  for (int i = 0; i < axes; ++i) {
    // Every pass runs, size-1 windows included (x * 1 + 0 is exact): the buffers alternate
    // a, b, a, ... so that each pass knows where its source lies.
    bool into_a = true;
    for (int a = axes - 1; a >= 0; --a) {
      const bool first = a == axes - 1;
      int e = 0;
      if (first) {
        e = with_type(in_type, [&](auto tag) {
          laplacian_pass<decltype(tag)>
              <<<grid, block, 0, st>>>(samples, windows, i, a, true, into_a);
          return int(cudaGetLastError());
        });
      } else {
        laplacian_pass<float><<<grid, block, 0, st>>>(samples, windows, i, a, false, into_a);
        e = int(cudaGetLastError());
      }
      if (e) return e;
      into_a = !into_a;
    }
    const bool in_a = !into_a;
    const bool last = i == axes - 1;
    int e = with_type(last ? out_type : DType::kF32, [&](auto tag) {
      laplacian_sum<decltype(tag)><<<grid, block, 0, st>>>(samples, i, in_a, last);
      return int(cudaGetLastError());
    });
    if (e) return e;
  }
  return 0;
}

}  // namespace stoker::kernels
