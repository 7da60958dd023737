// Crop window arguments shared by crop and crop_mirror_normalize: `crop` = [h, w] or
// crop_h/crop_w (per sample), and crop_pos_x/crop_pos_y in [0, 1]. The anchor is
// floor(pos * (in - crop) + 0.5), as in DALI.
#pragma once

#include <optional>

#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// The window for sample i of an image of in_h x in_w, or nullopt when no crop was requested.
std::optional<CropWindow> crop_window_arg(const Operator& op, const Workspace& ws, int i,
                                          int64_t in_h, int64_t in_w);

// The argument schemas (crop, crop_h, crop_w, crop_pos_x, crop_pos_y).
std::vector<ArgSchema> crop_arg_schemas();

// Rejects windows that leave the image (out_of_bounds_policy="error").
void check_window_inside(const CropWindow& w, int64_t in_h, int64_t in_w, const std::string& op);

}  // namespace stoker::ops
