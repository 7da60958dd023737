// warp_affine and rotate: affine resampling, one map per sample (a fused flip folds into it).
#pragma once

#include <cstdint>

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema warp_affine_schema();
OpSchema rotate_schema();
// rotate's output size without `size` or keep_size (DALI's): an h x w image turned by `angle`
// degrees gives oh x ow. bbox_rotate uses it to follow the image.
void rotated_canvas(double angle, int64_t h, int64_t w, int64_t& oh, int64_t& ow);
}  // namespace stoker::ops
