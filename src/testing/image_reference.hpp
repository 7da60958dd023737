// Slow, obviously correct references for the image kernels, in double precision, written
// straight from each kernel's documented conventions (not from its code), plus generators
// and comparison helpers for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stoker::testing {

// A dense HWC image of doubles.
struct RefImage {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<double> data;
  double& at(int64_t y, int64_t x, int64_t c) {
    return data[size_t((y * width + x) * channels + c)];
  }
  double at(int64_t y, int64_t x, int64_t c) const {
    return data[size_t((y * width + x) * channels + c)];
  }
};

// Random u8 image with smooth structure and noise (never constant), from a fixed seed.
std::vector<uint8_t> random_image_u8(int64_t h, int64_t w, int64_t c, uint32_t seed);
RefImage to_ref(const uint8_t* data, int64_t h, int64_t w, int64_t c, int64_t row_stride);

// Resize with the triangle filter: output pixel centre (i + 0.5) * in / out; radius 1, or the
// scale factor when downscaling with antialias; taps outside the image dropped, weights
// renormalised. Evaluated as a direct 2-D sum over every source pixel.
RefImage resize_linear_reference(const RefImage& in, int64_t out_h, int64_t out_w, bool antialias);

// (in - mean) / std * scale + shift, mirrored horizontally when asked; HWC result.
RefImage normalize_reference(const RefImage& in, const std::vector<double>& mean,
                             const std::vector<double>& stddev, double scale, double shift,
                             bool mirror);

// Rounds half away from zero and saturates to [0, 255], as kernels convert to u8.
uint8_t round_u8(double v);

}  // namespace stoker::testing
