#include <cuda_runtime.h>

#include <cstdint>

#include "stoker/kernels/signal/stft.hpp"
#include "stoker/kernels/signal/stft_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGridX = 8192;

int64_t grid_x(int64_t units) {
  const int64_t blocks = (units + kThreads - 1) / kThreads;
  return blocks < 1 ? 1 : blocks < kMaxGridX ? blocks : kMaxGridX;
}

// Block (x, sample): a grid-stride loop over the sample's windows x nfft values (stft_frame).
__global__ void frames_kernel(const StftGpuSample* samples, StftGpuParams p,
                              const float* __restrict__ window, float* __restrict__ frames) {
  const StftGpuSample& s = samples[blockIdx.y];
  const int64_t count = s.windows * p.nfft;
  const int64_t centre = p.padding == 0 ? 0 : p.window_length / 2;
  float* rows = frames + s.first_row * p.nfft;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t w = e / p.nfft, t = e - w * p.nfft;
    float v = 0.f;
    if (t < p.window_length) {
      int64_t i = w * p.window_step - centre + t;
      if (p.padding == 2) i = reflect_101(i, s.length);
      if (i >= 0 && i < s.length) v = __fmul_rn(window[t], s.signal[i]);
    }
    rows[e] = v;
  }
}

// Block (x, sample): the sample's bins x windows outputs, written in order (spectrum_from_bins).
__global__ void spectrum_kernel(const StftGpuSample* samples, StftGpuParams p,
                                const float2* __restrict__ spectra) {
  const StftGpuSample& s = samples[blockIdx.y];
  const int64_t bins = p.nfft / 2 + 1, count = s.windows * bins;
  const float2* rows = spectra + s.first_row * bins;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t w, k;
    if (p.time_major) {
      w = e / bins, k = e - w * bins;
    } else {
      k = e / s.windows, w = e - k * s.windows;
    }
    const float2 x = rows[w * bins + k];
    const float power = __fadd_rn(__fmul_rn(x.x, x.x), __fmul_rn(x.y, x.y));
    s.out[e] = p.power == 2 ? power : __fsqrt_rn(power);
  }
}

}  // namespace

int stft_frames_gpu(const StftGpuSample* samples, int n, int64_t max_windows,
                    const StftGpuParams& p, const float* window, float* frames,
                    StreamHandle stream) {
  if (n == 0 || max_windows == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const dim3 grid{unsigned(grid_x(max_windows * p.nfft)), unsigned(n)};
  frames_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(samples, p, window,
                                                                          frames);
  return int(cudaGetLastError());
}

int stft_spectrum_gpu(const StftGpuSample* samples, int n, int64_t max_windows,
                      const StftGpuParams& p, const float* spectra, StreamHandle stream) {
  if (n == 0 || max_windows == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const dim3 grid{unsigned(grid_x(max_windows * (p.nfft / 2 + 1))), unsigned(n)};
  spectrum_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      samples, p, reinterpret_cast<const float2*>(spectra));
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
