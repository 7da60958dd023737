// readers.video: sequences of frames from video files (DALI's fn.readers.video).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema video_reader_schema();

// For readers.video_resize, which reads as readers.video does: its arguments (without the
// loader's), its outputs' names for a spec, and its dataset for a spec holding its arguments.
std::vector<ArgSchema> video_reader_args();
std::vector<std::string> video_reader_output_names(const OpSpec& spec);
std::unique_ptr<ReaderSource> make_video_reader_source(const OpSpec& spec);
}  // namespace stoker::ops
