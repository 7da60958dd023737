// experimental.remap: DALI's remap (NPP's rules, kernels/geometry/remap.hpp) on HWC images and
// their sequences, with a CPU backend DALI does not have.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema remap_schema();
}  // namespace stoker::ops
