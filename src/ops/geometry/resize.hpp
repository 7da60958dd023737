// resize (DALI's modes, filters and antialiasing), experimental.resize (DALI's CV-CUDA resize:
// the same operator here) and random_resized_crop.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema resize_schema();
OpSchema experimental_resize_schema();
OpSchema random_resized_crop_schema();
}  // namespace stoker::ops
