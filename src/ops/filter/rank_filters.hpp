// experimental.median_blur, experimental.dilate, experimental.erode (DALI 2.4, which has them on
// the GPU only, through CV-CUDA): rank filters over a rectangular window of HW, HWC and CHW
// images and their sequences; stoker has both backends.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema median_blur_schema();
OpSchema dilate_schema();
OpSchema erode_schema();
}  // namespace stoker::ops
