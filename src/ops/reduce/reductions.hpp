// The reductions family (fn.reductions.*): sum, min, max, mean, mean_square, rms, and
// std_dev/variance about a given mean, per sample over any set of axes, with DALI 2.4's types
// and arithmetic (kernels/reduce/).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema reduce_sum_schema();
OpSchema reduce_min_schema();
OpSchema reduce_max_schema();
OpSchema reduce_mean_schema();
OpSchema reduce_mean_square_schema();
OpSchema reduce_rms_schema();
OpSchema reduce_std_dev_schema();
OpSchema reduce_variance_schema();
}  // namespace stoker::ops
