// tensor_resize (DALI's TensorResize; experimental.tensor_resize is its deprecated name).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema tensor_resize_schema();
}  // namespace stoker::ops
