// to_decibels: DALI's fn.to_decibels (magnitudes to the decibel scale).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema to_decibels_schema();
}  // namespace stoker::ops
