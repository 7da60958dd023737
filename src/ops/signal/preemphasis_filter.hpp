// preemphasis_filter: DALI's fn.preemphasis_filter (y[t] = x[t] - coeff * x[t-1]).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema preemphasis_filter_schema();
}  // namespace stoker::ops
