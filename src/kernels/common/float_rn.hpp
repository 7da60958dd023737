// Float (and double) products and sums rounded once each on the CPU and the GPU alike: nvcc fuses a product
// into a following addition (one rounding), which the CPU build does not; kernels whose GPU
// backend must equal its CPU twin bit for bit use these.
#pragma once

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

STOKER_HOST_DEVICE inline float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

STOKER_HOST_DEVICE inline float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

STOKER_HOST_DEVICE inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

STOKER_HOST_DEVICE inline double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

}  // namespace stoker::kernels
