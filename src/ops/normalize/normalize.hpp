// normalize: (x - mean) / stddev * scale + shift, statistics computed over `axes` per sample
// (or over the whole batch), or given.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema normalize_schema();
}  // namespace stoker::ops
