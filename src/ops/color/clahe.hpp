// clahe (DALI 2.4's fn.clahe): contrast-limited adaptive histogram equalization of uint8
// grayscale and RGB images, as OpenCV's CLAHE.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema clahe_schema();
}  // namespace stoker::ops
