// random_bbox_crop: SSD's prospective crop window and the boxes (and labels) it keeps.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema random_bbox_crop_schema();
}  // namespace stoker::ops
