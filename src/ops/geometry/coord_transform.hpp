// coord_transform: out = M in + T for points or vectors (the last axis holds their components).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema coord_transform_schema();
}  // namespace stoker::ops
