// bbox_rotate: bounding boxes turned with their image (rotate), dropped when they leave it.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema bbox_rotate_schema();
}  // namespace stoker::ops
