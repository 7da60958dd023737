// segmentation.random_object_bbox: the bounding box of a random object (a connected blob of one
// label) in a label map.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema random_object_bbox_schema();
}  // namespace stoker::ops
