// fn.laplacian on the GPU with laplacian.hpp's arithmetic (the same windows, passes in the same
// order, products and sums rounded apart, never fused), so that it equals the CPU kernel bit for
// bit. Per partial derivative one launch per axis and one that sums it in: at most 12 launches
// per batch, whatever the samples' sizes and windows.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/filter/laplacian.hpp"

namespace stoker::kernels {

struct LaplacianGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  float* a = nullptr;  // device scratch: planes x plane size floats each
  float* b = nullptr;
  float* acc = nullptr;
  LaplacianShape shape;
};

// The window table for the device: laplacian_window's taps, kLaplacianWindowSlots floats per
// window, smoothing windows of sizes 1, 3, ..., 31 then the derivative ones.
inline constexpr int kLaplacianWindowSlots = kLaplacianMaxWindow;
inline constexpr int kLaplacianWindowTableSize =
    2 * (kLaplacianMaxWindow / 2 + 1) * kLaplacianWindowSlots;
void laplacian_window_table(float* table);  // kLaplacianWindowTableSize floats (host)

// `samples`, `windows`: device arrays. `axes`: the batch's spatial axes (1..3); `max_elems`: the
// largest planes x plane size. Input types u8, i8, u16, i16, u32, i32, u64, i64, f16, f32;
// output the input's type or f32.
int laplacian_gpu(const LaplacianGpuSample* samples, const float* windows, int n, int axes,
                  int64_t max_elems, DType in_type, DType out_type, StreamHandle stream);

}  // namespace stoker::kernels
