// gaussian_blur: separable Gaussian blur of images (HWC or HW), per-sample sigma/window_size.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema gaussian_blur_schema();
}  // namespace stoker::ops
