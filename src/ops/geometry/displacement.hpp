// water and sphere: DALI's displacement filters, which resample each HWC image through a
// closed-form map of its pixels (kernels/geometry/displacement.hpp).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema water_schema();
OpSchema sphere_schema();
}  // namespace stoker::ops
