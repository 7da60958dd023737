// segmentation.random_mask_pixel: a random position in a mask, among its foreground or anywhere.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema random_mask_pixel_schema();
}  // namespace stoker::ops
