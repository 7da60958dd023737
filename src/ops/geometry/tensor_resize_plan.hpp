// tensor_resize's size rules, DALI's (ResizeAttrBase, TensorResizeAttr, TensorResize): per
// axis of a sample, the output extent and the region of the input resampled to it, computed
// in float where DALI does, so that fractional sizes round to DALI's extents; and the block of
// at most 3 adjacent axes the batch resamples (the axes outside it are left as they are).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::ops {

enum class ResizeMode { kDefault, kStretch, kNotLarger, kNotSmaller };
enum class SizeRounding { kRound, kTruncate, kCeil };

// "default", "stretch", "not_larger", "not_smaller"; ValueError naming `op` otherwise.
ResizeMode parse_resize_mode(const std::string& op, const std::string& mode);
// "round", "truncate", "ceil"; ValueError naming `op` otherwise.
SizeRounding parse_size_rounding(const std::string& op, const std::string& rounding);

// One axis of a sample: the output extent and the input region [lo, hi) it samples (lo > hi:
// flipped).
struct AxisResize {
  int64_t out = 0;
  float lo = 0, hi = 0;
};
// An axis left as it is: its extent, the whole axis.
inline AxisResize kept_axis(int64_t extent) { return {extent, 0.f, float(extent)}; }

// What the arguments ask of one sample, per axis of its (at least 2-D) shape.
struct AxisRequest {
  float size = 0;          // requested output extent (negative: flipped; 0: derived)
  float lo = 0, hi = 0;    // the region of interest (DALI's CalculateInputRoI)
  float alignment = 0.5f;  // the region's point that keeps its place when the size rounds
  float max_size = 0;      // 0: no limit
};

// The region of interest of an axis of `extent` from roi_start/roi_end (`relative`: fractions
// of the extent); a region narrower than 1e-3 pixel is widened to it (DALI's).
void axis_region(AxisRequest& a, int64_t extent, bool has_roi, double start, double end,
                 bool relative);

// DALI's CalculateSampleParams: every axis's extent and region. `empty`: the sample has no
// elements (extents may then be 0). A region float32 cannot widen (roi_start = roi_end = 1e9)
// stays empty: it samples that point. Throws ValueError naming `op` and `sample` where a size,
// region or alignment is not a finite number, or the output would hold more than the argument
// limit allows (arg_limits.hpp) beyond `in_elements` (naming `size_args`, the arguments that
// set the sizes).
std::vector<AxisResize> resize_axes(const std::string& op, int sample,
                                    std::vector<AxisRequest> axes, bool empty, bool subpixel_scale,
                                    ResizeMode mode, SizeRounding rounding, double in_elements,
                                    std::string_view size_args);

// The axes the batch resamples: [first, first + count), at least 2 (DALI's resampling is 2-D or
// 3-D); leading and trailing axes that no sample changes (extent kept, region the whole axis)
// are left out while more than 2 remain. in_shapes and plans are per sample.
struct ResizeBlock {
  int first = 0, count = 0;
};
ResizeBlock resize_block(const std::vector<std::vector<int64_t>>& in_shapes,
                         const std::vector<std::vector<AxisResize>>& plans, int ndim);

}  // namespace stoker::ops
