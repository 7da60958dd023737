#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "stoker/kernels/common/convert_gpu.cuh"
#include "stoker/kernels/common/visit_types.hpp"
#include "stoker/kernels/signal/resample_gpu.hpp"

namespace stoker::kernels {
namespace {

// resample_cpu's block: the outputs whose positions step from one double.
constexpr int kBlock = 256;
constexpr int kConvertThreads = 256;
constexpr int64_t kMaxGridX = 8192;

template <typename T>
constexpr bool kUnsigned = std::is_unsigned_v<T>;

// to_norm_float: v * (1 / max) for integers, the reciprocal rounded to float first.
template <typename T>
__device__ __forceinline__ float to_norm(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v;
  } else {
    constexpr float kInv = 1.0f / float(IntRange<T>::hi);
    return __fmul_rn(float(v), kInv);
  }
}

// resample_input, the same float steps.
template <typename T>
__global__ void to_floats(const AudioResampleGpuSample* samples, bool out_unsigned) {
  const AudioResampleGpuSample& s = samples[blockIdx.y];
  if (!s.floats) return;
  const T* in = static_cast<const T*>(s.in);
  const int64_t count = s.in_length * s.channels;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += int64_t(gridDim.x) * blockDim.x) {
    float f = to_norm(in[k]);
    if (out_unsigned && !kUnsigned<T>) {
      f = __fmul_rn(__fadd_rn(f, 1.0f), 0.5f);
    } else if (!out_unsigned && kUnsigned<T>) {
      f = __fsub_rn(__fmul_rn(f, 2.0f), 1.0f);
    }
    s.floats[k] = f;
  }
}

struct Window {
  const float* lookup;
  float scale, center;
  int lobes;
};

// ResampleWindow::operator(): the table read at x with linear interpolation.
__device__ __forceinline__ float window_at(const Window& w, float x) {
  const float fi = __fadd_rn(__fmul_rn(x, w.scale), w.center);
  const float floori = floorf(fi);
  const float di = __fsub_rn(fi, floori);
  const int i = int(floori);
  const float a = w.lookup[i];
  return __fadd_rn(a, __fmul_rn(di, __fsub_rn(w.lookup[i + 1], a)));
}

// resample_detail::window4's lane: the index truncated (fi > 0: the floor).
__device__ __forceinline__ float window_lane(const Window& w, float x) {
  const float fi = __fadd_rn(__fmul_rn(x, w.scale), w.center);
  const int i = __float2int_rz(fi);
  const float di = __fsub_rn(fi, float(i));
  const float a = w.lookup[i];
  return __fadd_rn(a, __fmul_rn(di, __fsub_rn(w.lookup[i + 1], a)));
}

// from_norm_float: floats as they are; integers scaled by the type's maximum, rounded half
// away from zero and saturated.
template <typename Out>
__device__ __forceinline__ Out from_norm(float v) {
  if constexpr (std::is_floating_point_v<Out>) {
    return v;
  } else {
    const float scaled = __fmul_rn(v, float(IntRange<Out>::hi));
    return to_int_saturated<Out>(double(roundf(scaled)));
  }
}

// One output of a mono signal: resample_cpu's channels == 1 branch (sum4's four lanes, summed
// (0 + 2) + (1 + 3), then the rest in order).
__device__ __forceinline__ float mono_value(const Window& w, const float* block, int i0, int i1,
                                            float pos) {
  int i = i0;
  float f[4] = {0.f, 0.f, 0.f, 0.f};
  float x[4];
  for (int l = 0; l < 4; ++l) x[l] = __fsub_rn(float(i + l), pos);
  for (; i + 3 < i1; i += 4) {
    for (int l = 0; l < 4; ++l) {
      f[l] = __fadd_rn(f[l], __fmul_rn(block[i + l], window_lane(w, x[l])));
      x[l] = __fadd_rn(x[l], 4.0f);
    }
  }
  float sum = __fadd_rn(__fadd_rn(f[0], f[2]), __fadd_rn(f[1], f[3]));
  float xt = __fsub_rn(float(i), pos);
  for (; i < i1; i++) {
    sum = __fadd_rn(sum, __fmul_rn(block[i], window_at(w, xt)));
    xt = __fadd_rn(xt, 1.0f);
  }
  return sum;
}

// Block (x, sample) makes blocks of kBlock outputs of its sample (a grid-stride loop): thread 0
// steps the block's positions in float as resample_cpu does, then each thread makes outputs.
// The window's table is read from shared memory.
template <typename Out>
__global__ void resample(const AudioResampleGpuSample* samples, AudioResampleGpuWindow table) {
  extern __shared__ float lookup[];
  __shared__ float positions[kBlock];
  for (int k = threadIdx.x; k < table.size; k += blockDim.x) lookup[k] = table.lookup[k];
  __syncthreads();
  const Window w{lookup, table.scale, table.center, table.lobes};
  const AudioResampleGpuSample& s = samples[blockIdx.y];
  const float* in = s.floats ? s.floats : static_cast<const float*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int channels = s.channels;
  const double scale = s.scale;
  const float fscale = float(scale);
  const int64_t blocks = (s.out_length + kBlock - 1) / kBlock;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const int64_t out_block = b * kBlock;
    const int count = int(s.out_length - out_block < kBlock ? s.out_length - out_block : kBlock);
    const double in_block_f = __dmul_rn(double(out_block), scale);
    const int64_t in_block_i = int64_t(floor(in_block_f));
    if (threadIdx.x == 0) {
      float pos = float(__dsub_rn(in_block_f, double(in_block_i)));
      for (int k = 0; k < count; ++k) {
        positions[k] = pos;
        pos = __fadd_rn(pos, fscale);
      }
    }
    __syncthreads();
    for (int t = threadIdx.x; t < count * channels; t += blockDim.x) {
      const int k = t / channels, c = t - k * channels;
      const float pos = positions[k];
      const int xc = int(ceilf(pos));
      int i0 = xc - w.lobes, i1 = xc + w.lobes;
      if (i0 + in_block_i < 0) i0 = int(-in_block_i);
      if (i1 + in_block_i > s.in_length) i1 = int(s.in_length - in_block_i);
      float v;
      if (channels == 1) {
        v = mono_value(w, in + in_block_i, i0, i1, pos);
      } else {
        // Each channel's products summed in input order (resample_cpu's multi-channel loop).
        v = 0.f;
        float x = __fsub_rn(float(i0), pos);
        for (int i = i0; i < i1; i++) {
          const float wx = window_at(w, x);
          v = __fadd_rn(v, __fmul_rn(in[(in_block_i + i) * channels + c], wx));
          x = __fadd_rn(x, 1.0f);
        }
      }
      out[(out_block + k) * channels + c] = from_norm<Out>(v);
    }
    __syncthreads();
  }
}

bool unsigned_type(DType d) { return d == DType::kU8 || d == DType::kU16 || d == DType::kU32; }

int64_t grid_x(int64_t units, int64_t per_block) {
  const int64_t blocks = (units + per_block - 1) / per_block;
  return blocks < 1 ? 1 : blocks < kMaxGridX ? blocks : kMaxGridX;
}

}  // namespace

int audio_resample_gpu(const AudioResampleGpuSample* samples, int n, int64_t max_in_values,
                       int64_t max_out_length, DType in, DType out,
                       const AudioResampleGpuWindow& window, StreamHandle stream) {
  if (n == 0 || max_out_length == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const bool out_unsigned = unsigned_type(out);
  if (in != DType::kF32 || out_unsigned) {
    bool known = false;
    if (max_in_values > 0) {
      const dim3 grid(unsigned(grid_x(max_in_values, kConvertThreads)), unsigned(n));
      known = visit_types<DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32,
                          DType::kU32, DType::kF32>(in, [&](auto tag) {
        to_floats<decltype(tag)><<<grid, kConvertThreads, 0, st>>>(samples, out_unsigned);
      });
      if (!known) return int(cudaErrorInvalidValue);
    }
  }
  const dim3 grid(unsigned(grid_x(max_out_length, kBlock)), unsigned(n));
  const size_t shared = size_t(window.size) * sizeof(float);
  const bool known = visit_types<DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32,
                                 DType::kU32, DType::kF32>(out, [&](auto tag) {
    resample<decltype(tag)><<<grid, kBlock, shared, st>>>(samples, window);
  });
  if (!known) return int(cudaErrorInvalidValue);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
