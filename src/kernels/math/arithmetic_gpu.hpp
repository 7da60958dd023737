// Arithmetic expressions on the GPU: the expression as a postfix program (ArithInstr), evaluated
// per element in double with a small stack, each node's value converted to its type as the CPU
// twin (arithmetic_cpu.hpp) does (floats to the nearest value, to integers rounded half away
// from zero and saturated, NaN to 0). One launch per batch. Broadcast operands are read through
// their strides (ArithBroadcast), the element's index found per element.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/math/arithmetic_functions.hpp"

namespace stoker::kernels {

constexpr int kArithMaxInputs = 8;
constexpr int kArithMaxProgram = 64;
constexpr int kArithMaxStack = 16;

struct ArithProgram {
  ArithInstr code[kArithMaxProgram];
  int32_t length = 0;
  DType input_type[kArithMaxInputs] = {};
  DType out_type = DType::kF32;
};

struct ArithGpuSample {
  const void* in[kArithMaxInputs] = {};
  int64_t in_count[kArithMaxInputs] = {};  // 1: one value for every element
  bool strided[kArithMaxInputs] = {};       // read through broadcast[k] (arith_plan_broadcast)
  // Device array of one plan per input when an input is strided, else null: kept apart so
  // that the descriptors of the fast path stay small.
  const ArithBroadcast* broadcast = nullptr;
  void* out = nullptr;
  int64_t count = 0;
};

// `samples`: device array. Integer division or modulo by zero gives 0 on the GPU (the CPU
// operator raises); the program is checked on the host for constant divisors.
int arithmetic_gpu(const ArithGpuSample* samples, int n, int64_t max_count,
                   const ArithProgram& program, StreamHandle stream);

}  // namespace stoker::kernels
