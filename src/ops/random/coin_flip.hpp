// random.coin_flip: Bernoulli draws (int32 or `dtype`), one tensor of `shape` per sample. Draws come from each sample's own Philox stream, so values depend only on
// (seed, operator instance, sample index).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema coin_flip_schema();
}  // namespace stoker::ops
