// random.choice: draws from a list of values (or 0..n-1) with given probabilities. Draws come from each sample's own Philox stream, so values depend only on
// (seed, operator instance, sample index).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema choice_schema();
}  // namespace stoker::ops
