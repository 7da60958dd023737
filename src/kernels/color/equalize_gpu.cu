#include <cuda_runtime.h>

#include "stoker/kernels/color/equalize_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kValuesPerBlock = 16 * kThreads;

// Block (x, plane, sample): counts the plane's values [x * kValuesPerBlock, ...) into shared
// bins per channel (up to kMaxSharedChannels; more go straight to global memory).
constexpr int kMaxSharedChannels = 4;
__global__ void histogram(const EqualizeGpuSample* __restrict__ samples) {
  const EqualizeGpuSample& s = samples[blockIdx.z];
  const int64_t C = s.shape.channels, values = s.shape.pixels * C;
  const int64_t p = blockIdx.y;
  const int64_t begin = int64_t(blockIdx.x) * kValuesPerBlock;
  if (p >= s.shape.planes || begin >= values) return;
  const int64_t end = begin + kValuesPerBlock < values ? begin + kValuesPerBlock : values;
  const uint8_t* src = s.in + p * values;
  uint32_t* hist = s.hist + p * C * 256;
  if (C > kMaxSharedChannels) {
    for (int64_t k = begin + threadIdx.x; k < end; k += blockDim.x)
      atomicAdd(&hist[(k % C) * 256 + src[k]], 1u);
    return;
  }
  __shared__ uint32_t bins[kMaxSharedChannels * 256];
  for (int k = threadIdx.x; k < C * 256; k += blockDim.x) bins[k] = 0;
  __syncthreads();
  for (int64_t k = begin + threadIdx.x; k < end; k += blockDim.x)
    atomicAdd(&bins[(k % C) * 256 + src[k]], 1u);
  __syncthreads();
  for (int k = threadIdx.x; k < C * 256; k += blockDim.x)
    if (bins[k]) atomicAdd(&hist[k], bins[k]);
}

// Block (group, sample): clears the group's bins.
__global__ void clear(const EqualizeGpuSample* __restrict__ samples) {
  const EqualizeGpuSample& s = samples[blockIdx.y];
  if (int64_t(blockIdx.x) >= s.shape.planes * s.shape.channels) return;
  s.hist[int64_t(blockIdx.x) * 256 + threadIdx.x] = 0;
}

// Block (group, sample): one thread builds the table of (plane, channel) `group`.
__global__ void tables(const EqualizeGpuSample* __restrict__ samples) {
  const EqualizeGpuSample& s = samples[blockIdx.y];
  const int64_t g = blockIdx.x;
  if (g >= s.shape.planes * s.shape.channels || s.shape.pixels == 0 || threadIdx.x != 0) return;
  equalize_lut(s.hist + g * 256, s.shape.pixels, s.lut + g * 256);
}

__global__ void apply(const EqualizeGpuSample* __restrict__ samples) {
  const EqualizeGpuSample& s = samples[blockIdx.z];
  const int64_t C = s.shape.channels, values = s.shape.pixels * C;
  const int64_t p = blockIdx.y;
  if (p >= s.shape.planes) return;
  const uint8_t* src = s.in + p * values;
  uint8_t* dst = s.out + p * values;
  const uint8_t* lut = s.lut + p * C * 256;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < values;
       k += int64_t(gridDim.x) * blockDim.x)
    dst[k] = lut[(k % C) * 256 + src[k]];
}

}  // namespace

int equalize_gpu(const EqualizeGpuSample* samples, int n, int64_t max_values, int64_t max_groups,
                 int64_t max_planes, StreamHandle stream) {
  if (n == 0 || max_values == 0 || max_groups == 0) return 0;
  if (n > 65535 || max_planes > 65535 || max_groups > 65535) {
    return int(cudaErrorInvalidConfiguration);
  }
  auto st = cudaStream_t(stream);
  clear<<<dim3(unsigned(max_groups), unsigned(n)), 256, 0, st>>>(samples);
  if (int e = int(cudaGetLastError())) return e;
  const int64_t chunks = (max_values + kValuesPerBlock - 1) / kValuesPerBlock;
  histogram<<<dim3(unsigned(chunks), unsigned(max_planes), unsigned(n)), kThreads, 0, st>>>(
      samples);
  if (int e = int(cudaGetLastError())) return e;
  tables<<<dim3(unsigned(max_groups), unsigned(n)), 32, 0, st>>>(samples);
  if (int e = int(cudaGetLastError())) return e;
  const int64_t blocks = (max_values + kThreads - 1) / kThreads;
  apply<<<dim3(unsigned(blocks < 65535 ? blocks : 65535), unsigned(max_planes), unsigned(n)),
          kThreads, 0, st>>>(samples);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
