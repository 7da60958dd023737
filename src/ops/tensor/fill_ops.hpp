// full, full_like, ones, ones_like, zeros, zeros_like: new tensors filled with a value (a
// broadcast fill tensor, 1 or 0), shaped by `shape` or like another batch.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema full_schema();
OpSchema full_like_schema();
OpSchema ones_schema();
OpSchema ones_like_schema();
OpSchema zeros_schema();
OpSchema zeros_like_schema();
}  // namespace stoker::ops
