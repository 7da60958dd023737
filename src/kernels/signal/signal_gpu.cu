#include <cuda_runtime.h>

#include <algorithm>
#include <cuda/std/limits>
#include <type_traits>

#include "stoker/kernels/common/float_rn.hpp"
#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/signal/signal_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGridY = 65535;

// Blocks along x for `count` elements of the largest sample (a grid-stride loop does the rest).
unsigned blocks_for(int64_t count) {
  return unsigned(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 4096));
}

// Launches `launch(first, count)` for the samples in runs of at most 65535; the first error.
template <typename F>
int in_grid_runs(int n, F&& launch) {
  for (int first = 0; first < n; first += kMaxGridY) {
    launch(first, std::min(kMaxGridY, n - first));
    if (const cudaError_t rc = cudaGetLastError(); rc != cudaSuccess) return int(rc);
  }
  return 0;
}

// core/dtype.hpp's cast_value, branch for branch, for the types preemphasis_filter takes
// (integers, float, double): floats to integers rounded half away from zero, saturated, NaN 0.
template <typename Out, typename In>
__device__ Out cast_value_gpu(In v) {
  using L = cuda::std::numeric_limits<Out>;
  if constexpr (std::is_floating_point_v<Out>) {
    return Out(v);
  } else if constexpr (std::is_integral_v<In>) {
    if constexpr (std::is_signed_v<In>) {
      if (v < 0 && (!std::is_signed_v<Out> || int64_t(v) < int64_t(L::min()))) return L::min();
    }
    if (v > 0 && uint64_t(v) > uint64_t(L::max())) return L::max();
    return Out(v);
  } else {
    const double d = double(v);
    if (!(d == d)) return Out(0);
    const double r = round(d);
    // The maxima of the 64-bit types round up to 2^63 / 2^64 as doubles, which no value below
    // them reaches (the host compares in long double).
    if (r <= double(L::min())) return L::min();
    if (r >= double(L::max())) return L::max();
    return Out(r);
  }
}

// -- preemphasis_filter -----------------------------------------------------------------------

template <typename Out, typename In>
__global__ void preemphasis_kernel(const PreemphasisGpuSample* __restrict__ samples,
                                   PreemphasisBorder border) {
  using Acc = std::conditional_t<std::is_same_v<In, double>, double, float>;
  const PreemphasisGpuSample& s = samples[blockIdx.y];
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const Acc coeff = Acc(s.coeff);
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < s.elements; t += step) {
    if (s.coeff == 0.f || (t == 0 && border == PreemphasisBorder::kZero)) {
      out[t] = cast_value_gpu<Out>(in[t]);
      continue;
    }
    In prev;
    if (t > 0) {
      prev = in[t - 1];
    } else {
      prev = border == PreemphasisBorder::kReflect && s.elements > 1 ? in[1] : in[0];
    }
    // x - c * prev: the product rounded before the difference, as on the CPU.
    out[t] = cast_value_gpu<Out>(add_rn(Acc(in[t]), -mul_rn(coeff, Acc(prev))));
  }
}

template <typename F>
bool visit_signal_types(DType d, F&& f) {
  return visit_types<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                     DType::kU64, DType::kI64, DType::kF32, DType::kF64>(d, std::forward<F>(f));
}

// -- to_decibels ------------------------------------------------------------------------------

// Block (x, sample): the largest value above 0 of the block's elements (NaNs never are), into the
// sample's max_bits. Non-negative floats order as their bits do.
__global__ void positive_max_kernel(DecibelsGpuSample* __restrict__ samples) {
  DecibelsGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  uint32_t most = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s.elements; i += step) {
    const float x = s.in[i];
    if (x > 0.f) most = max(most, __float_as_uint(x));
  }
  for (int d = 16; d > 0; d /= 2) most = max(most, __shfl_down_sync(0xffffffffu, most, d));
  __shared__ uint32_t warps[kThreads / 32];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = most;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) most = max(most, warps[w]);
    if (most != 0) atomicMax(&s.max_bits, most);
  }
}

__global__ void decibels_kernel(const DecibelsGpuSample* __restrict__ samples, float reference,
                                float min_ratio, float mul_log2) {
  const DecibelsGpuSample& s = samples[blockIdx.y];
  const float ref = reference != 0.f ? reference : __uint_as_float(s.max_bits);
  const float inv_reference = ref == 1.f ? 1.f : __fdiv_rn(1.f, ref);
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s.elements; i += step) {
    const float ratio = __fmul_rn(s.in[i], inv_reference);
    // std::max(min_ratio, ratio): a NaN ratio gives min_ratio.
    const float clipped = min_ratio < ratio ? ratio : min_ratio;
    s.out[i] = __fmul_rn(mul_log2, float(log2(double(clipped))));
  }
}

// -- mel_filter_bank --------------------------------------------------------------------------

// Output element (o, m, j) of a sample: filter m over bins of row o, column j, summed in the
// order of the CPU's apply_time_major (inner 1) or apply_freq_major.
__global__ void mel_kernel(const MelGpuSample* __restrict__ samples, int64_t nfilter) {
  const MelGpuSample& s = samples[blockIdx.y];
  const int64_t total = s.outer * nfilter * s.inner;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  const MelBankGpu& bank = s.bank;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    if (s.bins < 2) {
      s.out[idx] = 0.f;
      continue;
    }
    const int64_t j = idx % s.inner, rest = idx / s.inner;
    const int64_t m = rest % nfilter, o = rest / nfilter;
    const float* in = s.in + o * s.bins * s.inner + j;
    float v = 0.f;
    if (s.inner == 1) {
      int64_t b = bank.ends[m];
      for (; b < bank.ends[m + 1]; ++b) v = add_rn(v, mul_rn(in[b], bank.rise[b]));
      for (; b < bank.ends[m + 2]; ++b) v = add_rn(v, mul_rn(in[b], bank.fall[b]));
      if (bank.norm) v = mul_rn(v, bank.norm[m]);
    } else {
      for (int64_t b = bank.first[m]; b < bank.last[m]; ++b)
        v = add_rn(v, mul_rn(bank.up[b], in[b * s.inner]));
      for (int64_t b = bank.first[m + 1]; b < bank.last[m + 1]; ++b)
        v = add_rn(v, mul_rn(bank.down[b], in[b * s.inner]));
    }
    s.out[idx] = v;
  }
}

// -- mfcc -------------------------------------------------------------------------------------

// Output element (o, k, j): coefficient k of the line (o, :, j), as dct_cpu sums it.
__global__ void dct_kernel(const DctGpuSample* __restrict__ samples, const float* lifter) {
  const DctGpuSample& s = samples[blockIdx.y];
  const int64_t total = s.outer * s.ndct * s.inner;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += step) {
    const int64_t j = idx % s.inner, rest = idx / s.inner;
    const int64_t k = rest % s.ndct, o = rest / s.ndct;
    const float* line = s.in + o * s.n * s.inner + j;
    const float* row = s.table + k * s.n;
    float acc = 0.f;
    for (int64_t t = 0; t < s.n; ++t) acc = add_rn(acc, mul_rn(line[t * s.inner], row[t]));
    s.out[idx] = lifter ? mul_rn(lifter[k], acc) : acc;
  }
}

}  // namespace

int preemphasis_gpu(const PreemphasisGpuSample* samples, int n, int64_t max_elements, DType in,
                    DType out, PreemphasisBorder border, StreamHandle stream) {
  if (n == 0 || max_elements == 0) return 0;
  int rc = int(cudaErrorInvalidValue);
  visit_signal_types(in, [&](auto i) {
    visit_signal_types(out, [&](auto o) {
      rc = in_grid_runs(n, [&](int first, int count) {
        preemphasis_kernel<decltype(o), decltype(i)>
            <<<dim3(blocks_for(max_elements), unsigned(count)), kThreads, 0,
               cudaStream_t(stream)>>>(samples + first, border);
      });
    });
  });
  return rc;
}

int to_decibels_gpu(DecibelsGpuSample* samples, int n, int64_t max_elements, float reference,
                    float min_ratio, float mul_log2, StreamHandle stream) {
  if (n == 0 || max_elements == 0) return 0;
  const auto st = cudaStream_t(stream);
  return in_grid_runs(n, [&](int first, int count) {
    const dim3 grid(blocks_for(max_elements), unsigned(count));
    if (reference == 0.f) positive_max_kernel<<<grid, kThreads, 0, st>>>(samples + first);
    decibels_kernel<<<grid, kThreads, 0, st>>>(samples + first, reference, min_ratio, mul_log2);
  });
}

int mel_filter_bank_gpu(const MelGpuSample* samples, int n, int64_t max_outputs, int64_t nfilter,
                        StreamHandle stream) {
  if (n == 0 || max_outputs == 0) return 0;
  return in_grid_runs(n, [&](int first, int count) {
    mel_kernel<<<dim3(blocks_for(max_outputs), unsigned(count)), kThreads, 0,
                 cudaStream_t(stream)>>>(samples + first, nfilter);
  });
}

int dct_gpu(const DctGpuSample* samples, int count, int64_t max_outputs, const float* lifter,
            StreamHandle stream) {
  if (count == 0 || max_outputs == 0) return 0;
  return in_grid_runs(count, [&](int first, int runs) {
    dct_kernel<<<dim3(blocks_for(max_outputs), unsigned(runs)), kThreads, 0,
                 cudaStream_t(stream)>>>(samples + first, lifter);
  });
}

}  // namespace stoker::kernels
