// lookup_table (DALI 2.4's fn.lookup_table): integer data mapped through a table of keys and
// values, a default value for every other input value.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema lookup_table_schema();
}  // namespace stoker::ops
