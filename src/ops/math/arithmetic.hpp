// arithmetic: expressions of pipeline values fused into one operator (see arithmetic.cpp).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema arithmetic_schema();
}  // namespace stoker::ops
