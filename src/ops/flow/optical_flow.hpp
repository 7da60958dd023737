// optical_flow: DALI's operator on the GPU's optical-flow engine (kernels/flow/nvof_engine.hpp).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema optical_flow_schema();
}  // namespace stoker::ops
