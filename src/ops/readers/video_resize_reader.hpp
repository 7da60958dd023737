// readers.video_resize: readers.video with resize's arguments (DALI's fn.readers.video_resize,
// and its legacy name video_reader_resize).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema video_resize_reader_schema();
}  // namespace stoker::ops
