// readers.video: sequences of frames from video files (DALI's fn.readers.video).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema video_reader_schema();
}  // namespace stoker::ops
