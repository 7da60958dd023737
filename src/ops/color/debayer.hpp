// debayer (DALI 2.4's fn.debayer; fn.experimental.debayer, its older name): Bayer-pattern
// sensor images to RGB (or gray), as OpenCV's demosaicing.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema debayer_schema();
}  // namespace stoker::ops
