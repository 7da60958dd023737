// Shared by the resize family (resize, experimental.resize, random_resized_crop,
// resize_crop_mirror, tensor_resize): output-size rules, the resize arguments and their
// schemas, and the per-sample call of the resize kernel with per-thread scratch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"
#include "stoker/kernels/resize/resize_cpu.hpp"
#include "stoker/ops/geometry/tensor_resize_plan.hpp"
#include "stoker/ops/op_spec.hpp"
#include "stoker/ops/operator.hpp"

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

// The filters of interp_type, min_filter and mag_filter (DALI's: the last two, when given,
// replace interp_type's filter for the axes that shrink and for the others); `antialias` comes
// from the argument (triangular is linear). Errors name the operator and the argument.
kernels::ResizeFilters parse_interp(const OpSpec& spec, bool& antialias);

// The output dtype: `dtype` when given, else the input's.
DType resize_output_dtype(const OpSpec& spec, DType input);

// Per-thread float scratch for the separable passes, grown to the high-water mark.
class ResizeScratch {
 public:
  std::vector<float>& get(int thread) { return scratch_[size_t(thread)]; }
  void ensure(int threads) {
    if (int(scratch_.size()) < threads) scratch_.resize(size_t(threads));
  }

 private:
  std::vector<std::vector<float>> scratch_;
};

// The arguments of the filters (interp_type, min_filter, mag_filter, antialias, dtype).
std::vector<ArgSchema> resize_interp_args();
// DALI's ResizeAttr: resize_x, resize_y, resize_z, size, resize_shorter, resize_longer,
// max_size, mode, subpixel_scale, roi_start, roi_end, roi_relative.
std::vector<ArgSchema> resize_size_args();

// The spatial axes of the layouts the resize family takes besides HWC images: volumes, DHWC
// (axes 0-2) and CDHW (axes 1-3). None: another layout (HWC images have their own path).
struct SpatialAxes {
  int first = 0, count = 0;
};
std::optional<SpatialAxes> volume_axes(const TensorLayout& layout);
// The layouts resize and experimental.resize take through the tensor resampler: volumes, and
// channel-first images — CHW (axes 1-2) and CFHW clips (axes 2-3: channels and frames lead).
// None: HWC images (FHWC and FCHW clips reach the operator frame by frame).
std::optional<SpatialAxes> tensor_axes(const TensorLayout& layout);

// What DALI's ResizeAttr makes of those arguments for HWC sample i: the output's shape and the
// region of the input resampled to it (none: the whole image).
struct ImageResizePlan {
  TensorShape shape;
  std::optional<kernels::ResizeRoi> roi;
};
class ImageResizeArgs {
 public:
  explicit ImageResizeArgs(const OpSpec& spec);  // checks mode
  // Thread-safe (per sample); errors name the operator and sample i.
  ImageResizePlan plan(const Operator& op, const Workspace& ws, const Batch& in, int i) const;
  // The same for volume sample i (its spatial axes `axes`), as DALI computes it for volumes (in
  // float32, tensor_resize_plan's resize_axes): every axis's extent and region, the axes
  // outside `axes` kept.
  std::vector<AxisResize> volume_plan(const Operator& op, const Workspace& ws, const Batch& in,
                                      int i, SpatialAxes axes) const;

 private:
  std::optional<kernels::ResizeRoi> region_of_interest(const Operator& op, const Workspace& ws,
                                                       int i, int64_t h, int64_t w) const;
  // A per-axis list argument of sample i for `count` axes: one value for all, or one per axis.
  std::vector<double> per_axis(const Operator& op, const Workspace& ws, const char* arg, int i,
                               int count) const;
  std::string name_, mode_;
  bool subpixel_scale_ = true, roi_relative_ = false;
};

// The interp_type of operators that offer only nearest neighbour and bilinear (warp_affine,
// rotate, jitter): true for linear; any other filter throws ValueError naming the operator.
bool interp_is_linear(const OpSpec& spec);

}  // namespace stoker::ops
