// resize_crop_mirror (and DALI's deprecated fast_resize_crop_mirror, stoker.wrappers): resize,
// crop and flip in one resampling of the region the window keeps.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema resize_crop_mirror_schema();
}  // namespace stoker::ops
