// Filter weights for separable resampling.
//
// Conventions (the contract the GPU kernels will follow; PIL's resampling, which torchvision's
// antialiased resize follows):
// - pixel centres are at integer + 0.5; output pixel i maps to source position
//   c = (i + 0.5) * in_size / out_size;
// - filters, f(x) with x in source pixels and radius R: linear (triangle, 1 - |x|, R 1),
//   cubic (Keys with a = -0.5, R 2), lanczos3 (sinc(x) sinc(x/3), R 3); when downscaling with
//   antialias, x is divided by the scale factor and R multiplied by it;
// - taps that fall outside the source are dropped and the remaining weights renormalised to
//   sum to 1;
// - gaussian is DALI's own (PIL has none), weights to the bit: its table of exp(-x^2) read with
//   linear interpolation, sigma = R / (2 sqrt 2) over R = 1 (R = the scale factor when
//   downscaling with antialias), and taps outside the source repeating the edge pixel;
// - nearest: the source pixel floor(c), clamped (never antialiased).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stoker::kernels {

struct ResampleWeights {
  int64_t out_size = 0;
  int support = 0;             // taps per output pixel
  std::vector<int64_t> first;  // first source index per output pixel
  std::vector<int> count;      // taps used per output pixel (<= support)
  std::vector<float> weights;  // out_size * support, zero-padded
};

enum class Filter { kNearest, kLinear, kCubic, kLanczos3, kGaussian };
// DALI's min_filter and mag_filter: the filter of an axis the resize shrinks (fewer output
// pixels than the input extent it samples) and of one it enlarges or keeps. One Filter: both.
struct ResizeFilters {
  Filter min = Filter::kLinear, mag = Filter::kLinear;
  ResizeFilters() = default;
  ResizeFilters(Filter f) : min(f), mag(f) {}  // NOLINT(google-explicit-constructor): one for all
  ResizeFilters(Filter shrink, Filter enlarge) : min(shrink), mag(enlarge) {}
  // The filter of an axis sampling `in_extent` pixels (a region's |end - start|) into `out`.
  Filter for_axis(double in_extent, int64_t out) const {
    return double(out) < in_extent ? min : mag;
  }
};

// "nn", "linear", "triangular" (linear, as DALI's), "cubic", "lanczos3", "gaussian", also with
// DALI's INTERP_ prefix, any case. Throws ValueError otherwise ("'name' is not supported (...)":
// callers prefix the argument's name).
Filter parse_filter(const std::string& name);

ResampleWeights resample_weights(int64_t in_size, int64_t out_size, Filter filter, bool antialias);
// Resamples the region [roi_lo, roi_hi) of the source (pixel coordinates, fractional allowed;
// roi_lo > roi_hi flips): output pixel i maps to c = roi_lo + (i + 0.5) * (roi_hi - roi_lo) /
// out_size. Taps may use source pixels outside the region (it is a sampling grid, not a
// crop); outside the image they are dropped as above, and a centre beyond the image takes
// the nearest edge pixel. Nearest neighbour takes pixel floor(c), with c in float as DALI
// computes it (a centre on a pixel boundary goes where DALI's goes): directly for a horizontal
// axis, accumulated row by row for a `vertical` one, from roi_lo - nn_shift (nn_origin_shift).
ResampleWeights resample_weights(int64_t in_size, int64_t out_size, Filter filter, bool antialias,
                                 double roi_lo, double roi_hi, bool vertical = false,
                                 int64_t nn_shift = 0);

// DALI's nearest-neighbour resize of a region reads from the first pixel its first pass needs:
// that axis's positions are computed from the region's start less that pixel's index, which
// rounds differently where a position falls on a pixel boundary. The shifts {y, x} (one of them
// 0) for an in_h x in_w image resampled to out_h x out_w over [y0, y1) x [x0, x1).
std::pair<int64_t, int64_t> nn_origin_shift(int64_t in_h, int64_t in_w, int64_t out_h,
                                            int64_t out_w, double y0, double y1, double x0,
                                            double x1);
inline ResampleWeights linear_resample_weights(int64_t in_size, int64_t out_size, bool antialias) {
  return resample_weights(in_size, out_size, Filter::kLinear, antialias);
}

}  // namespace stoker::kernels
