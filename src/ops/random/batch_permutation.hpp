// batch_permutation: a random order of the batch's samples, one int32 scalar per sample (as
// DALI), for permute_batch: a permutation, one without fixed points, or draws with repetition.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema batch_permutation_schema();
}  // namespace stoker::ops
