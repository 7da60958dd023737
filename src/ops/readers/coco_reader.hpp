// readers.coco: COCO datasets (images, boxes, labels, polygon and pixel-wise masks).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema coco_reader_schema();
}  // namespace stoker::ops
