// Shared by resize and random_resized_crop: output-size rules and the per-sample call of the
// linear resize kernel with per-thread scratch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"
#include "stoker/kernels/resize/resize_cpu.hpp"
#include "stoker/ops/op_spec.hpp"

namespace stoker::ops {

struct ResizeRequest {
  double resize_y = 0, resize_x = 0;  // 0: not given
  double shorter = 0, longer = 0;     // resize_shorter / resize_longer; 0: not given
  double max_h = 0, max_w = 0;        // max_size; 0: unlimited
  std::string mode = "default";       // default | stretch | not_larger | not_smaller
};

// Output (height, width) for an input of in_h x in_w, following DALI's rules: a single given
// extent keeps the aspect ratio; both given stretch (mode default/stretch) or fit inside
// (not_larger) / cover (not_smaller) keeping aspect; resize_shorter/longer scale the shorter/
// longer side; max_size caps each extent keeping aspect. Extents round half up, minimum 1.
// The input extents may be fractional (a region of interest).
std::pair<int64_t, int64_t> resize_output_size(double in_h, double in_w, const ResizeRequest& r);
// The same before rounding (fractional extents: 46.5 for a 31-pixel side at scale 1.5).
std::pair<double, double> resize_exact_size(double in_h, double in_w, const ResizeRequest& r);

// Resizes window (y0, x0, h, w) of HWC sample i of `in` into sample i of `out` (same channel
// count, dtype u8 or f32 in and u8/f32 out) with `filter` (per axis: shrinking or not),
// antialiased when asked; with `roi`, resamples that region of the window instead of all of it.
void resize_sample(const Batch& in, int i, int64_t y0, int64_t x0, int64_t h, int64_t w, Batch& out,
                   kernels::ResizeFilters filter, bool antialias, std::vector<float>& scratch,
                   const kernels::ResizeRoi* roi = nullptr);

// The interp_type of operators that offer only nearest neighbour and bilinear (warp_affine,
// rotate, jitter): true for linear; any other filter throws ValueError naming the operator.
bool interp_is_linear(const OpSpec& spec);

}  // namespace stoker::ops
