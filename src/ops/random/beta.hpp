// random.beta: Beta(alpha, beta) draws in [0, 1] (as DALI), float32 or float64, alpha and beta
// per sample, one tensor of `shape` (or of the shape_like input's shape) per sample.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema beta_schema();
}  // namespace stoker::ops
