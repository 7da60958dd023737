// slice: an N-D window of each sample, from anchor/shape inputs or start/end/shape arguments,
// with DALI's out-of-bounds policies.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema slice_schema();
}  // namespace stoker::ops
