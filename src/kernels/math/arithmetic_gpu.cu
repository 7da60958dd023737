#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "stoker/kernels/math/arithmetic_gpu.hpp"
#include "stoker/kernels/common/convert_gpu.cuh"

namespace stoker::kernels {
namespace {

__device__ double load(const void* p, int64_t k, DType t) {
  switch (t) {
    case DType::kBool:
      return static_cast<const bool*>(p)[k] ? 1.0 : 0.0;
    case DType::kU8:
      return static_cast<const uint8_t*>(p)[k];
    case DType::kU16:
      return static_cast<const uint16_t*>(p)[k];
    case DType::kU32:
      return static_cast<const uint32_t*>(p)[k];
    case DType::kU64:
      return double(static_cast<const uint64_t*>(p)[k]);
    case DType::kI8:
      return static_cast<const int8_t*>(p)[k];
    case DType::kI16:
      return static_cast<const int16_t*>(p)[k];
    case DType::kI32:
      return static_cast<const int32_t*>(p)[k];
    case DType::kI64:
      return double(static_cast<const int64_t*>(p)[k]);
    case DType::kF16:
      return double(__half2float(static_cast<const __half*>(p)[k]));
    case DType::kBF16:
      return double(__bfloat162float(static_cast<const __nv_bfloat16*>(p)[k]));
    case DType::kF32:
      return static_cast<const float*>(p)[k];
    default:
      return static_cast<const double*>(p)[k];
  }
}

// Round half away from zero and saturate to [lo, hi] (NaN: 0), as cast_value (the 64-bit
// ranges as doubles: the result stays a double here).
__device__ double to_int(double x, double lo, double hi) { return round_saturate(x, lo, hi); }

// The value `x` takes as type `t` (returned as double).
__device__ double as_type(double x, DType t) {
  switch (t) {
    case DType::kBool:
      return x != 0 ? 1.0 : 0.0;
    case DType::kU8:
      return to_int(x, 0, 255);
    case DType::kU16:
      return to_int(x, 0, 65535);
    case DType::kU32:
      return to_int(x, 0, 4294967295.0);
    case DType::kU64:
      return to_int(x, 0, 18446744073709551615.0);
    case DType::kI8:
      return to_int(x, -128, 127);
    case DType::kI16:
      return to_int(x, -32768, 32767);
    case DType::kI32:
      return to_int(x, -2147483648.0, 2147483647.0);
    case DType::kI64:
      return to_int(x, -9223372036854775808.0, 9223372036854775807.0);
    case DType::kF16:
      return double(__half2float(__float2half_rn(float(x))));
    case DType::kBF16:
      return double(__bfloat162float(__float2bfloat16_rn(float(x))));
    case DType::kF32:
      return double(float(x));
    default:
      return x;
  }
}

__device__ void store(void* p, int64_t k, DType t, double x) {
  const double v = as_type(x, t);
  switch (t) {
    case DType::kBool:
      static_cast<bool*>(p)[k] = v != 0;
      break;
    case DType::kU8:
      static_cast<uint8_t*>(p)[k] = uint8_t(v);
      break;
    case DType::kU16:
      static_cast<uint16_t*>(p)[k] = uint16_t(v);
      break;
    case DType::kU32:
      static_cast<uint32_t*>(p)[k] = uint32_t(v);
      break;
    case DType::kU64:
      static_cast<uint64_t*>(p)[k] = v >= 18446744073709551615.0 ? ~uint64_t(0) : uint64_t(v);
      break;
    case DType::kI8:
      static_cast<int8_t*>(p)[k] = int8_t(v);
      break;
    case DType::kI16:
      static_cast<int16_t*>(p)[k] = int16_t(v);
      break;
    case DType::kI32:
      static_cast<int32_t*>(p)[k] = int32_t(v);
      break;
    case DType::kI64:
      static_cast<int64_t*>(p)[k] = v >= 9223372036854775807.0 ? INT64_MAX : int64_t(v);
      break;
    case DType::kF16:
      static_cast<__half*>(p)[k] = __float2half_rn(float(x));
      break;
    case DType::kBF16:
      static_cast<__nv_bfloat16*>(p)[k] = __float2bfloat16_rn(float(x));
      break;
    case DType::kF32:
      static_cast<float*>(p)[k] = float(x);
      break;
    default:
      static_cast<double*>(p)[k] = x;
      break;
  }
}

__device__ bool is_float_type(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}

__global__ void arithmetic_kernel(const ArithGpuSample* __restrict__ samples, ArithProgram prog) {
  const ArithGpuSample& s = samples[blockIdx.y];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < s.count; p += step) {
    double stack[kArithMaxStack];
    int top = 0;
    for (int k = 0; k < prog.length; ++k) {
      const ArithInstr& ins = prog.code[k];
      if (ins.op == -1) {
        const int a = ins.arg;
        const int64_t q = s.strided[a]         ? arith_source_index(s.broadcast[a], p)
                          : s.in_count[a] == 1 ? 0
                                               : p;
        stack[top++] = load(s.in[a], q, prog.input_type[a]);
      } else if (ins.op == -2) {
        stack[top++] = ins.value;
      } else {
        top -= ins.arity;
        const double x = stack[top], y = ins.arity > 1 ? stack[top + 1] : 0.0,
                     z = ins.arity > 2 ? stack[top + 2] : 0.0;
        stack[top++] = as_type(arith_apply(ins.op, x, y, z, !is_float_type(ins.type)), ins.type);
      }
    }
    store(s.out, p, prog.out_type, stack[0]);
  }
}

}  // namespace

int arithmetic_gpu(const ArithGpuSample* samples, int n, int64_t max_count,
                   const ArithProgram& program, StreamHandle stream) {
  if (n == 0 || max_count == 0) return 0;
  if (n > 65535) return int(cudaErrorInvalidConfiguration);
  const int block = 256;
  const dim3 grid(unsigned(std::min<int64_t>((max_count + block - 1) / block, 1024)), unsigned(n));
  arithmetic_kernel<<<grid, block, 0, cudaStream_t(stream)>>>(samples, program);
  return int(cudaGetLastError());
}

}  // namespace stoker::kernels
