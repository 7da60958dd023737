// experimental.inputs.video: encoded videos fed from outside the pipeline, returned as
// consecutive sequences of frames (DALI's fn.experimental.inputs.video).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema video_input_schema();
}  // namespace stoker::ops
