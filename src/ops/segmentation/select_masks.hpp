// segmentation.select_masks: the polygons (and their vertices) of chosen masks.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema select_masks_schema();
}  // namespace stoker::ops
