// Filter weights for separable resampling with the linear (triangle) filter.
//
// Conventions (the contract the GPU kernels will follow):
// - pixel centres are at integer + 0.5; output pixel i maps to source position
//   (i + 0.5) * in_size / out_size;
// - the filter is a triangle of radius 1 source pixel (bilinear interpolation), widened to the
//   scale factor when downscaling with antialias (PIL / torchvision "antialias=True");
// - taps that fall outside the source are dropped and the remaining weights renormalised
//   (equivalent to clamping at the border for plain bilinear).
#pragma once

#include <cstdint>
#include <vector>

namespace stoker::kernels {

struct ResampleWeights {
  int64_t out_size = 0;
  int support = 0;             // taps per output pixel
  std::vector<int64_t> first;  // first source index per output pixel
  std::vector<float> weights;  // out_size * support, zero-padded
};

ResampleWeights linear_resample_weights(int64_t in_size, int64_t out_size, bool antialias);

}  // namespace stoker::kernels
