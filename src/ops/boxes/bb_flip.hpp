// bb_flip: mirrors bounding boxes in normalised coordinates, horizontally and/or vertically.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema bb_flip_schema();
}  // namespace stoker::ops
