// Schemas of the geometry operators: resize, random_resized_crop, crop, flip.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema resize_schema();
OpSchema random_resized_crop_schema();
OpSchema crop_schema();
OpSchema flip_schema();
OpSchema warp_affine_schema();
OpSchema rotate_schema();
OpSchema erase_schema();
OpSchema jitter_schema();
OpSchema paste_schema();
}  // namespace stoker::ops
