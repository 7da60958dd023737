// random.uniform: uniform float32 draws in a range, or picks from a list of values. Draws come from each sample's own Philox stream, so values depend only on
// (seed, operator instance, sample index).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema uniform_schema();
}  // namespace stoker::ops
