#include <cuda_runtime.h>

#include "stoker/kernels/color/jpeg_distortion_gpu.hpp"

namespace stoker::kernels {
namespace {

namespace jd = jpeg_distortion;

// A CUDA block takes kMcus 16x16 blocks at a time, 64 threads each: a thread owns one 2x2
// pixel group (one chroma pixel) for the colour conversions and one 8-point slice (48 of the
// 64 threads: 6 blocks x 8 rows or columns) for each DCT pass.
constexpr int kMcus = 4;
constexpr int kThreads = 64 * kMcus;

__global__ void distort(const JpegDistortionGpuSample* __restrict__ samples) {
  __shared__ jd::Mcu mcus[kMcus];
  __shared__ uint8_t q[2][64];
  const JpegDistortionGpuSample& s = samples[blockIdx.y];
  const int t = threadIdx.x, m = t / 64, g = t % 64;
  if (t < 64)
    q[0][t] = s.tables.luma[t];
  else if (t < 128)
    q[1][t - 64] = s.tables.chroma[t - 64];
  const int64_t across = (s.w + 15) / 16, blocks = across * ((s.h + 15) / 16);
  jd::Mcu& mcu = mcus[m];
  // Every thread runs the same iterations (the barriers); those past the last block idle.
  for (int64_t first = int64_t(blockIdx.x) * kMcus; first < blocks;
       first += int64_t(gridDim.x) * kMcus) {
    const int64_t k = first + m;
    const bool active = k < blocks;
    const int64_t x0 = (active ? k % across : 0) * 16, y0 = (active ? k / across : 0) * 16;
    if (active) jd::load_group(s.in, s.h, s.w, x0, y0, g % 8, g / 8, mcu);
    __syncthreads();
    const int b = g / 8, r = g % 8;
    if (active && g < 48) jd::dct_forward(&mcu[b][r][0], 1);  // rows
    __syncthreads();
    if (active && g < 48) jd::dct_forward(&mcu[b][0][r], 9);  // columns
    __syncthreads();
    if (active)
      for (int c = 0; c < 6; ++c)
        mcu[c][g / 8][g % 8] = jd::quantize(mcu[c][g / 8][g % 8], float(q[c < 4 ? 0 : 1][g]));
    __syncthreads();
    if (active && g < 48) jd::dct_inverse(&mcu[b][0][r], 9);  // columns
    __syncthreads();
    if (active && g < 48) jd::dct_inverse(&mcu[b][r][0], 1);  // rows
    __syncthreads();
    if (active) jd::store_group(mcu, s.h, s.w, x0, y0, g % 8, g / 8, s.out);
    __syncthreads();
  }
}

}  // namespace

int jpeg_distortion_gpu(const JpegDistortionGpuSample* samples, int n, int64_t most_blocks,
                        StreamHandle stream) {
  if (n == 0 || most_blocks == 0) return 0;
  const int64_t wanted = (most_blocks + kMcus - 1) / kMcus;
  for (int first = 0; first < n; first += 65535) {  // the grid's y limit
    const int part = n - first < 65535 ? n - first : 65535;
    const dim3 grid(unsigned(wanted < 1024 ? wanted : 1024), unsigned(part));
    distort<<<grid, kThreads, 0, cudaStream_t(stream)>>>(samples + first);
  }
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
