#include <cuda_runtime.h>

#include "stoker/kernels/color/clahe_gpu.hpp"

namespace stoker::kernels {
namespace {

constexpr int kThreads = 256;

__device__ int planes_of(const ClaheGpuSample& s) { return s.luma ? 1 : s.channels; }

// Block (x, sample): L* of every pixel of luma samples.
__global__ void luma_plane(const ClaheGpuSample* __restrict__ samples) {
  const ClaheGpuSample& s = samples[blockIdx.y];
  if (!s.luma) return;
  const int64_t pixels = s.height * s.width;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < pixels;
       k += int64_t(gridDim.x) * blockDim.x) {
    uint8_t lab[3];
    rgb_to_lab8(s.in + 3 * k, lab, *s.lab);
    s.plane[k] = lab[0];
  }
}

// Block (tile, plane, sample): the tile's histogram in shared memory, then its table.
__global__ void tables(const ClaheGpuSample* __restrict__ samples) {
  const ClaheGpuSample& s = samples[blockIdx.z];
  const ClaheGeometry& g = s.geometry;
  const int64_t tile = blockIdx.x;
  const int p = int(blockIdx.y);
  if (tile >= int64_t(g.tiles_x) * g.tiles_y || p >= planes_of(s) || s.height == 0 || s.width == 0)
    return;
  __shared__ uint32_t hist[256];
  hist[threadIdx.x] = 0;
  __syncthreads();
  const uint8_t* src = s.luma ? s.plane : s.in + p;
  const int stride = s.luma ? 1 : s.channels;
  const int64_t y0 = (tile / g.tiles_x) * g.tile_h, x0 = (tile % g.tiles_x) * g.tile_w;
  const int64_t area = g.tile_w * g.tile_h;
  for (int64_t k = threadIdx.x; k < area; k += blockDim.x) {
    const int64_t y = reflect101(y0 + k / g.tile_w, s.height);
    const int64_t x = reflect101(x0 + k % g.tile_w, s.width);
    atomicAdd(&hist[src[(y * s.width + x) * stride]], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const int64_t tiles = int64_t(g.tiles_x) * g.tiles_y;
    clahe_tile_lut(hist, g, s.luts + (p * tiles + tile) * 256);
  }
}

// Block (x, sample): every pixel (and channel) through the tables.
__global__ void apply(const ClaheGpuSample* __restrict__ samples) {
  const ClaheGpuSample& s = samples[blockIdx.y];
  const int64_t pixels = s.height * s.width;
  const int64_t tiles = int64_t(s.geometry.tiles_x) * s.geometry.tiles_y;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < pixels;
       k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t y = k / s.width, x = k % s.width;
    if (s.luma) {
      uint8_t lab[3];
      rgb_to_lab8(s.in + 3 * k, lab, *s.lab);
      lab[0] = clahe_pixel(s.luts, s.geometry, y, x, s.plane[k]);
      lab8_to_rgb(lab, s.out + 3 * k);
    } else {
      for (int c = 0; c < s.channels; ++c)
        s.out[k * s.channels + c] =
            clahe_pixel(s.luts + c * tiles * 256, s.geometry, y, x, s.in[k * s.channels + c]);
    }
  }
}

}  // namespace

int clahe_gpu(const ClaheGpuSample* samples, int n, int64_t max_pixels, int64_t max_tiles,
              StreamHandle stream) {
  if (n == 0 || max_pixels == 0) return 0;
  if (n > 65535 || max_tiles > 0x7fffffff) return int(cudaErrorInvalidConfiguration);
  auto st = cudaStream_t(stream);
  const int64_t blocks = (max_pixels + kThreads - 1) / kThreads;
  const dim3 grid(unsigned(blocks < 4096 ? blocks : 4096), unsigned(n));
  luma_plane<<<grid, kThreads, 0, st>>>(samples);
  if (int e = int(cudaGetLastError())) return e;
  tables<<<dim3(unsigned(max_tiles), 3, unsigned(n)), 256, 0, st>>>(samples);
  if (int e = int(cudaGetLastError())) return e;
  apply<<<grid, kThreads, 0, st>>>(samples);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
