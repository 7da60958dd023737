// constant: the same tensor for every sample (DALI's types.Constant; the values an `if` branch
// assigns from Python are promoted to it so that they can be merged with the other branch's).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema constant_schema();
}  // namespace stoker::ops
