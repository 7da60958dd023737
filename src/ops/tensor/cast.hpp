// cast: any numeric dtype to any other, with the CPU's rounding and saturation on both backends.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema cast_schema();
}  // namespace stoker::ops
