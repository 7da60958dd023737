// pad: extends axes with a fill value; on the GPU one strided-copy launch per batch.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema pad_schema();
}  // namespace stoker::ops
