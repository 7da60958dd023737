// experimental.readers.video: clips of frames from video files (DALI 2.4's
// fn.experimental.readers.video, its FFmpeg-based reader).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema experimental_video_reader_schema();
}  // namespace stoker::ops
