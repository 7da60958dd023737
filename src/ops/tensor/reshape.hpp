// reshape: a new shape (or layout) over the same bytes, no copy.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema reshape_schema();
}  // namespace stoker::ops
