// jitter (random per-pixel moves) and paste (the image placed on a larger canvas).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema jitter_schema();
OpSchema paste_schema();
}  // namespace stoker::ops
