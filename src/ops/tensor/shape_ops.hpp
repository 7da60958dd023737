// squeeze and expand_dims: views that remove or insert axes of extent 1 (no copy; they share
// reshape's view helpers).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema squeeze_schema();
OpSchema expand_dims_schema();
}  // namespace stoker::ops
