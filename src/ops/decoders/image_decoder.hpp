// decoders.image: encoded images (bytes) to HWC uint8 pixels on the CPU.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema image_decoder_schema();
}  // namespace stoker::ops
