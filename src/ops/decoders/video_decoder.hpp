// decoders.video: whole videos given as bytes (webdataset, external_source) decoded into
// sequences of frames (DALI's fn.decoders.video), on the CPU or on NVDEC (mixed).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema video_decoder_schema();
}  // namespace stoker::ops
