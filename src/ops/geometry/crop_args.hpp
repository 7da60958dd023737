// Crop window arguments shared by crop, crop_mirror_normalize and decoders.image_crop, read as
// DALI's CropAttr does: `crop` = [h, w] or [d, h, w], or crop_h/crop_w (and crop_d) (per sample;
// float32 values truncated, 0 or less: the whole axis), crop_pos_x/y/z in [0, 1] (float32) and
// `rounding` of the anchor pos * (in - crop): "round" (half away from zero) or "truncate". On
// images the depth arguments are ignored (as DALI's; its cut of a sequence's frames by crop_d is
// not followed: stoker crops each frame).
#pragma once

#include <array>

#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// A window over depth, height and width: anchors (may be negative or past the input when it is
// larger) and extents.
struct CropBox {
  std::array<int64_t, 3> anchor{}, extent{};
};

// The window for sample i of a volume of in_d x in_h x in_w, or of an image (in_d < 0: depth
// arguments ignored, the box's depth 1). The whole input when none is asked for.
CropBox crop_box_arg(const Operator& op, const Workspace& ws, int i, int64_t in_d, int64_t in_h,
                     int64_t in_w);
// The same for an image of in_h x in_w.
CropWindow crop_window_arg(const Operator& op, const Workspace& ws, int i, int64_t in_h,
                           int64_t in_w);

// The argument schemas (crop, crop_d, crop_h, crop_w, crop_pos_x/y/z, rounding).
std::vector<ArgSchema> crop_arg_schemas();

// Applies out_of_bounds_policy to `box` over an input of `in_extent` (depth, height, width):
// "error" refuses a window that leaves it, "trim_to_shape" cuts the window to it, anything else
// (padding, border modes) keeps the window. Errors name `op`.
void bound_box(CropBox& box, const std::array<int64_t, 3>& in_extent, const std::string& policy,
               const std::string& op);

// Rejects windows that leave the image (out_of_bounds_policy="error").
void check_window_inside(const CropWindow& w, int64_t in_h, int64_t in_w, const std::string& op);

}  // namespace stoker::ops
