// filter (DALI 2.4's fn.filter; fn.experimental.filter, its older name): the correlation of each
// sample (2-D or 3-D, channels first or last, sequences) with a per-sample filter.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema filter_schema();
}  // namespace stoker::ops
