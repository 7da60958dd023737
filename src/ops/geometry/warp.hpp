// warp_affine and rotate: affine resampling, one map per sample (a fused flip folds into it).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema warp_affine_schema();
OpSchema rotate_schema();
}  // namespace stoker::ops
