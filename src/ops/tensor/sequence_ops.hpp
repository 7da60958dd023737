// Frame gathers over sequences (the outermost dimension, layout starting with F): DALI's
// element_extract (frames as separate outputs, the F dimension gone) and sequence_rearrange
// (frames in a new order), on the CPU and the GPU; per_frame, which marks per-frame arguments.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema element_extract_schema();
OpSchema sequence_rearrange_schema();
OpSchema per_frame_schema();
}  // namespace stoker::ops
