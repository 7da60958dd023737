// erase: fills regions (anchor/shape per sample) with a fill value.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema erase_schema();
}  // namespace stoker::ops
