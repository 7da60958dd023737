// grid_mask: DALI's GridMask augmentation (zeroes a rotated, shifted grid of squares).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema grid_mask_schema();
}  // namespace stoker::ops
