// Crop window arguments shared by crop, crop_mirror_normalize and decoders.image_crop, read as
// DALI's CropAttr does: `crop` = [h, w] or crop_h/crop_w (per sample; float32 values truncated,
// 0 or less: the whole axis), crop_pos_x/crop_pos_y in [0, 1] (float32) and `rounding` of the
// anchor pos * (in - crop): "round" (half away from zero) or "truncate".
#pragma once

#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// The window for sample i of an image of in_h x in_w (the whole image when none is asked for).
CropWindow crop_window_arg(const Operator& op, const Workspace& ws, int i, int64_t in_h,
                           int64_t in_w);

// The argument schemas (crop, crop_h, crop_w, crop_pos_x, crop_pos_y, rounding).
std::vector<ArgSchema> crop_arg_schemas();

// Rejects windows that leave the image (out_of_bounds_policy="error").
void check_window_inside(const CropWindow& w, int64_t in_h, int64_t in_w, const std::string& op);

}  // namespace stoker::ops
