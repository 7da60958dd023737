// laplacian (DALI 2.4's fn.laplacian): the sum of each spatial axis's second derivative, each a
// separable convolution with a derivative window along its axis and smoothing windows along the
// others; 1-D, 2-D and 3-D samples, channels first or last, sequences.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema laplacian_schema();
}  // namespace stoker::ops
