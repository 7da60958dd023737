// shapes: each sample's shape as a 1-D tensor (DALI's fn.shapes and DataNode.shape()).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema shapes_schema();
}  // namespace stoker::ops
