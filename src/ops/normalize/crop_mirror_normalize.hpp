// crop_mirror_normalize: crop + mirror + normalize + HWC/CHW + cast in one pass.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema crop_mirror_normalize_schema();
}  // namespace stoker::ops
