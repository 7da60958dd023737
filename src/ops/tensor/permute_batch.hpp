// permute_batch: out[i] = in[indices[i]] (as DALI), sample i carrying its source's source_info;
// the output views the input's samples, no copy.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema permute_batch_schema();
}  // namespace stoker::ops
