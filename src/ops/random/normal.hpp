// random.normal: normal float32 draws (Box-Muller). Draws come from each sample's own Philox stream, so values depend only on
// (seed, operator instance, sample index).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema normal_schema();
}  // namespace stoker::ops
