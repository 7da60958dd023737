// equalize (DALI 2.4's fn.equalize; fn.experimental.equalize, its older name): per-channel
// histogram equalization of uint8 images and sequences.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema equalize_schema();
}  // namespace stoker::ops
