// crop (windows with padding) and flip (per-sample horizontal/vertical/depthwise).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema crop_schema();
OpSchema flip_schema();
}  // namespace stoker::ops
