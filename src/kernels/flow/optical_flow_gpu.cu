#include <cuda_runtime.h>

#include "stoker/kernels/flow/optical_flow_gpu.hpp"

namespace stoker::kernels {
namespace {

__global__ void pack_rgb_kernel(const uint8_t* in, int64_t h, int64_t w, bool bgr, uint8_t* out,
                                int64_t pitch) {
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  if (x >= w || y >= h) return;
  const uint8_t* p = in + (y * w + x) * 3;
  uchar4 v;
  v.x = bgr ? p[2] : p[0];
  v.y = p[1];
  v.z = bgr ? p[0] : p[2];
  v.w = 255;
  reinterpret_cast<uchar4*>(out + y * pitch)[x] = v;
}

__global__ void decode_kernel(const int16_t* in, int64_t pitch, int64_t h, int64_t w, float* out) {
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  if (x >= w || y >= h) return;
  const short2 v =
      reinterpret_cast<const short2*>(reinterpret_cast<const uint8_t*>(in) + y * pitch)[x];
  reinterpret_cast<float2*>(out)[y * w + x] =
      make_float2(decode_flow_value(v.x), decode_flow_value(v.y));
}

__global__ void encode_kernel(const float* in, int64_t h, int64_t w, int16_t* out, int64_t pitch) {
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  if (x >= w || y >= h) return;
  const float2 v = reinterpret_cast<const float2*>(in)[y * w + x];
  reinterpret_cast<short2*>(reinterpret_cast<uint8_t*>(out) + y * pitch)[x] =
      make_short2(encode_flow_value(v.x), encode_flow_value(v.y));
}

dim3 grid_of(int64_t h, int64_t w, dim3 block) {
  return dim3(unsigned((w + block.x - 1) / block.x), unsigned((h + block.y - 1) / block.y));
}

}  // namespace

int pack_flow_frame_gpu(const uint8_t* in, int64_t h, int64_t w, int channels, bool bgr,
                        uint8_t* out, int64_t pitch, StreamHandle stream) {
  if (h == 0 || w == 0) return 0;
  auto s = static_cast<cudaStream_t>(stream);
  if (channels == 1)
    return int(cudaMemcpy2DAsync(out, size_t(pitch), in, size_t(w), size_t(w), size_t(h),
                                 cudaMemcpyDeviceToDevice, s));
  const dim3 block(32, 8);
  pack_rgb_kernel<<<grid_of(h, w, block), block, 0, s>>>(in, h, w, bgr, out, pitch);
  return int(cudaGetLastError());
}

int decode_flow_gpu(const int16_t* in, int64_t pitch, int64_t h, int64_t w, float* out,
                    StreamHandle stream) {
  if (h == 0 || w == 0) return 0;
  const dim3 block(32, 8);
  decode_kernel<<<grid_of(h, w, block), block, 0, static_cast<cudaStream_t>(stream)>>>(in, pitch, h,
                                                                                       w, out);
  return int(cudaGetLastError());
}

int encode_flow_gpu(const float* in, int64_t h, int64_t w, int16_t* out, int64_t pitch,
                    StreamHandle stream) {
  if (h == 0 || w == 0) return 0;
  const dim3 block(32, 8);
  encode_kernel<<<grid_of(h, w, block), block, 0, static_cast<cudaStream_t>(stream)>>>(in, h, w,
                                                                                       out, pitch);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
