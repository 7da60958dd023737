// jpeg_compression_distortion (DALI 2.4's fn.jpeg_compression_distortion): RGB images (and
// sequences) encoded as JPEG at a per-sample quality and decoded again, for JPEG artefacts as
// augmentation.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema jpeg_compression_distortion_schema();
}  // namespace stoker::ops
