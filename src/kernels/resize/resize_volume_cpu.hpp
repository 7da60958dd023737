// Separable resize of a volume (depth x height x width x channels, dense) on the CPU, in two
// passes through float: each slice resized in its plane by resize_cpu, and the slices combined
// along the depth with resample_weights' taps (as the rows of a plane are). The order is the
// one with the smaller intermediate: planes first (the input's slices at the output's plane
// size) or depth first (the output's slices at the input's plane size), so that it is never
// larger than the input or the output. Conventions: resample_weights.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "stoker/kernels/resize/resize_cpu.hpp"

namespace stoker::kernels {

struct VolumeShape {
  int64_t depth = 0, height = 0, width = 0, channels = 0;
  int64_t plane() const { return height * width * channels; }
};

// A sampling region of a volume: [z0, z1) in depth and `plane` in each slice (resize_cpu's).
struct VolumeRoi {
  double z0, z1;
  ResizeRoi plane;
};

// Whether resize_volume_cpu resizes the planes first (else the depth) for these shapes; the GPU
// twin takes the same order.
inline bool planes_first(const VolumeShape& os, const VolumeShape& is) {
  return double(is.depth) * double(os.plane()) <= double(os.depth) * double(is.plane());
}

// The input slices [first, end) the depth filter reads.
inline std::pair<int64_t, int64_t> slices_read(const ResampleWeights& wz, int64_t depth) {
  int64_t lo = depth, hi = 0;
  for (size_t z = 0; z < wz.first.size(); ++z) {
    lo = std::min(lo, wz.first[z]);
    hi = std::max(hi, wz.first[z] + wz.count[z]);
  }
  return {lo, std::max(lo, hi)};
}

// Resamples region `roi` of volume `in` to `out`'s extents (same channel count > 0), each axis
// with the filter `filter` gives it. `slices` (the intermediate) and `scratch` are grown as
// needed and may be reused across calls.
template <typename Out, typename In>
void resize_volume_cpu(Out* out, const VolumeShape& os, const In* in, const VolumeShape& is,
                       ResizeFilters filter, bool antialias, const VolumeRoi& roi,
                       std::vector<float>& slices, std::vector<float>& scratch) {
  STOKER_ASSERT(is.channels == os.channels && is.channels > 0);
  const Filter fz = filter.for_axis(std::abs(roi.z1 - roi.z0), os.depth);
  auto wz = resample_weights(is.depth, os.depth, fz, antialias, roi.z0, roi.z1, true);
  const auto [lo, hi] = slices_read(wz, is.depth);
  if (!planes_first(os, is)) {
    // Depth first: output slice z is the taps' sum of input slices, then resized in its plane.
    const int64_t len = is.plane();
    slices.assign(size_t(os.depth * len), 0.f);
    for (int64_t z = 0; z < os.depth; ++z) {
      float* acc = &slices[size_t(z * len)];
      const float* w = &wz.weights[size_t(z) * size_t(wz.support)];
      for (int k = 0; k < wz.count[size_t(z)]; ++k) {
        const In* src = in + (wz.first[size_t(z)] + k) * len;
        for (int64_t i = 0; i < len; ++i) acc[i] += w[k] * to_float(src[i]);
      }
      resize_cpu<Out, float>(dense_image(out + z * os.plane(), os.height, os.width, os.channels),
                             dense_image<const float>(acc, is.height, is.width, is.channels),
                             filter, antialias, scratch, roi.plane);
    }
    return;
  }
  const int64_t len = os.plane();  // planes first: only the slices the depth filter reads
  slices.resize(size_t((hi - lo) * len));
  for (int64_t z = lo; z < hi; ++z)
    resize_cpu<float, In>(
        dense_image(&slices[size_t((z - lo) * len)], os.height, os.width, os.channels),
        dense_image(in + z * is.plane(), is.height, is.width, is.channels), filter, antialias,
        scratch, roi.plane);
  scratch.resize(size_t(len));
  float* acc = scratch.data();
  for (int64_t z = 0; z < os.depth; ++z) {
    resize_detail::vertical(&slices[size_t((wz.first[size_t(z)] - lo) * len)], len,
                            &wz.weights[size_t(z) * size_t(wz.support)], wz.count[size_t(z)], acc,
                            len);
    Out* dst = out + z * len;
    if constexpr (std::is_same_v<Out, uint8_t>)
      resize_detail::round_sat_u8(acc, dst, len);
    else
      for (int64_t i = 0; i < len; ++i) dst[i] = convert_sat<Out>(acc[i]);
  }
}

}  // namespace stoker::kernels
