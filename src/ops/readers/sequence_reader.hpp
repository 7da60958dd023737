// readers.sequence: reads sequences of frames stored as image files, one sub-folder per stream
// (DALI's deprecated frame-folder reader), and decodes them to FHWC uint8 clips.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema sequence_reader_schema();
}  // namespace stoker::ops
