// multi_paste: regions of images pasted onto zeroed canvases, in order (mosaics, copy-paste
// augmentation).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema multi_paste_schema();
}  // namespace stoker::ops
