// coord_flip: DALI's fn.coord_flip (reflects point coordinates about a centre).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema coord_flip_schema();
}  // namespace stoker::ops
