// Tensor manipulation: cast, transpose, reshape (no copy), pad, cat and stack.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema cast_schema();
OpSchema transpose_schema();
OpSchema reshape_schema();
OpSchema pad_schema();
OpSchema cat_schema();
OpSchema stack_schema();
}  // namespace stoker::ops
