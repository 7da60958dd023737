// decoders.image: encoded images (bytes) to HWC uint8 pixels on the CPU.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema image_decoder_schema();
OpSchema image_crop_decoder_schema();
OpSchema image_random_crop_decoder_schema();
OpSchema image_slice_decoder_schema();
OpSchema peek_image_shape_schema();
}  // namespace stoker::ops
