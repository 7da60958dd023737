// box_encoder: SSD's matching of boxes to anchors and its regression targets.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema box_encoder_schema();
}  // namespace stoker::ops
