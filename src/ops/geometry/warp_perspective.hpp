// experimental.warp_perspective: DALI's perspective warp (OpenCV's warpPerspective arithmetic,
// kernels/geometry/warp_perspective.hpp), on HW and HWC images and their sequences.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema warp_perspective_schema();
}  // namespace stoker::ops
