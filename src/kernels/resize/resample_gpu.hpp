// One GPU kernel for the whole resampling family: resize, random_resized_crop, crop (with
// padding), crop_mirror_normalize, and their fusion (resize + crop + mirror + normalize +
// layout + cast in one pass that reads the source once). One launch covers a ragged batch:
// each sample has a descriptor; its filter taps come from tables built on the host by
// kernels::resample_weights, the same weights the CPU kernels use, so the GPU result is the
// CPU result up to float rounding (summation order is the same: the horizontal taps of a
// source row, then the vertical taps).
//
// Output pixel (x, y) of sample s: with sx = mirror_x ? out_w-1-x : x (and sy likewise),
//   h_k = sum_j wx[sx][j] * in[fy[sy]+k][fx[sx]+j][c],  v = sum_k wy[sy][k] * h_k,
//   out = convert((v' - mean[c]) * inv_std[c] + shift), v' = v, or v rounded and clamped to
//   an intermediate integer type (mid_round: what a fused chain's unfused twin stores)
// where a row or column with no taps (count 0: outside the image, crop padding) gives fill[c]
// instead (not normalised), and channels from `channels` to `out_channels` are fill[c]. convert
// rounds half away from zero and saturates for integers, RNE for float16.
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

constexpr int kResampleMaxChannels = 16;  // for the normalisation and fill constants

struct ResampleGpuSample {
  const void* in = nullptr;  // HWC rows of in_w * channels elements, in_stride elements apart
  int64_t in_h = 0, in_w = 0, in_stride = 0;
  void* out = nullptr;  // out_h x out_w x out_channels, HWC or CHW
  int32_t out_h = 0, out_w = 0;
  int64_t x_entry = 0, y_entry = 0;    // this sample's first entry in first[] / count[]
  int64_t x_weight = 0, y_weight = 0;  // and in weights[]
  int32_t support_x = 0, support_y = 0;
  int32_t mirror_x = 0, mirror_y = 0;
};

struct ResampleGpuParams {
  DType in_type = DType::kU8, out_type = DType::kU8;
  int32_t channels = 0, out_channels = 0;
  int32_t planar = 0;  // CHW output
  float mean[kResampleMaxChannels] = {};
  float inv_std[kResampleMaxChannels] = {};
  float fill[kResampleMaxChannels] = {};
  float shift = 0.f;
  // Fused chains: the resampled value is first rounded and clamped to [mid_lo, mid_hi], as the
  // unfused chain stores its intermediate image (uint8: 0..255), so fusion changes nothing.
  int32_t mid_round = 0;
  float mid_lo = 0.f, mid_hi = 0.f;
};

struct ResampleGpuTables {  // device pointers
  const int32_t* first = nullptr;
  const int32_t* count = nullptr;
  const float* weights = nullptr;
};

// `samples` is a device array of n descriptors; max_out_h/w bound every sample's output.
// Returns the launch's cudaError_t (0: success). in_type: u8, u16, i16, f32; out_type: u8,
// i8, u16, i16, f16, f32.
int resample_gpu(const ResampleGpuSample* samples, int n, int64_t max_out_h, int64_t max_out_w,
                 const ResampleGpuParams& params, const ResampleGpuTables& tables,
                 StreamHandle stream);

// Flips (horizontal and/or vertical per sample) of [planes, h, w, channels] samples of
// `element_size`-byte elements: HWC is planes = 1, CHW is planes = C and channels = 1.
struct FlipGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t planes = 1, h = 0, w = 0, channels = 1;
  int32_t horizontal = 0, vertical = 0;
};
// mean_pixels: the samples' mean planes * h * w (sets the blocks per sample; any positive
// value is correct); max_elements: the most planes * h * w * channels of a sample (64-bit
// indices past 2^31); all_three_channels: every sample has 3 channels (a faster kernel).
int flip_gpu(const FlipGpuSample* samples, int n, int64_t mean_pixels, int64_t max_elements,
             bool all_three_channels, int element_size, StreamHandle stream);

}  // namespace stoker::kernels
