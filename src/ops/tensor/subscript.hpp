// _tensor_subscript and _subscript_dim_check: what `x[1, ::-2, stoker.newaxis, 3:]` on a
// DataNode builds (DALI's internal operators of the same names). The result views the input
// where the picked elements are one run of it, else it is a strided copy (one launch per batch
// on the GPU).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema tensor_subscript_schema();
OpSchema subscript_dim_check_schema();
}  // namespace stoker::ops
