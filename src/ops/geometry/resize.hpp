// resize (DALI's modes, filters and antialiasing) and random_resized_crop.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema resize_schema();
OpSchema random_resized_crop_schema();
}  // namespace stoker::ops
