// readers.file: reads encoded files (one sub-folder per class, a file list, or explicit files)
// and outputs their bytes and integer labels.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema file_reader_schema();
}  // namespace stoker::ops
