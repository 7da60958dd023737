// crop_mirror_normalize of one sample in any layout of up to four axes (volumes DHWC/CDHW,
// CHW images, CFHW clips), any output axis order, windows that leave the input. Output element
// (i_0 .. i_{n-1}) (output axes) reads input coordinate p_k = start[k] + step[k] * i_k on the
// input axis that output axis k shows (step -1: mirrored). Where some p_k leaves [0, extent[k])
// (the window outside the input, or a channel added by pad_output) it is fill[c], written raw;
// elsewhere (in - mean[c]) * inv_std[c] + shift in float32, then converted as the 2-D kernel
// converts (crop_mirror_normalize_cpu.hpp). The CPU twin of the GPU kernel
// (crop_mirror_normalize_nd_gpu.cu), and the path of every sample the 2-D kernel does not take.
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/normalize/crop_mirror_normalize_cpu.hpp"

namespace stoker::kernels {

constexpr int kCmnMaxDims = 4;

struct CmnNdSample {
  const void* in = nullptr;
  void* out = nullptr;  // dense, in the output's axis order
  int32_t ndim = 0;
  int32_t c_axis = 0;                // the output axis of the channels
  int64_t shape[kCmnMaxDims] = {};   // output extents (channels: with pad_output's)
  int64_t start[kCmnMaxDims] = {};   // input coordinate at output index 0
  int64_t step[kCmnMaxDims] = {};    // +1, or -1 where mirrored
  int64_t extent[kCmnMaxDims] = {};  // the input's extent on that axis
  int64_t stride[kCmnMaxDims] = {};  // input elements between neighbours on that axis
  const float* mean = nullptr;       // per input channel
  const float* inv_std = nullptr;    // scale / std, per input channel
  const float* fill = nullptr;       // per output channel
  float shift = 0.f;
};

template <typename Out, typename In>
void crop_mirror_normalize_nd_cpu(const CmnNdSample& s) {
  const int last = s.ndim - 1;
  const int64_t n = s.shape[last];
  int64_t rows = 1;
  for (int k = 0; k < last; ++k) rows *= s.shape[k];
  if (n == 0 || rows == 0) return;
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    // The row's outer coordinates: inside or not, their input offset, and its channel.
    bool inside = true;
    int64_t base = 0, channel = 0;
    for (int64_t k = last - 1, rem = r; k >= 0; --k) {
      const int64_t i = rem % s.shape[k];
      rem /= s.shape[k];
      const int64_t p = s.start[k] + s.step[k] * i;
      inside = inside && p >= 0 && p < s.extent[k];
      base += p * s.stride[k];
      if (k == s.c_axis) channel = i;
    }
    const bool channels_inner = s.c_axis == last;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t p = s.start[last] + s.step[last] * j;
      const int64_t c = channels_inner ? j : channel;
      row[size_t(j)] =
          inside && p >= 0 && p < s.extent[last]
              ? (to_float(in[base + p * s.stride[last]]) - s.mean[c]) * s.inv_std[c] + s.shift
              : s.fill[c];
    }
    detail::store_row(row.data(), out + r * n, n);
  }
}

// The GPU kernel over n descriptors (a device array); max_elements bounds every sample's
// output volume. in_type: u8, i16, u16, i32, f16, f32; out_type: f32, f16, u8, i8. Returns the
// launch's cudaError_t (0: success).
int crop_mirror_normalize_nd_gpu(const CmnNdSample* samples, int n, int64_t max_elements,
                                 DType in_type, DType out_type, StreamHandle stream);

}  // namespace stoker::kernels
