// random_crop_generator: RandomResizedCrop windows as anchor and shape outputs, for slice and
// the window decoders.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema random_crop_generator_schema();
}  // namespace stoker::ops
