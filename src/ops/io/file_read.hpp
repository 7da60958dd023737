// io.file.read: reads the whole file named by each sample (its path as UTF-8 bytes), as DALI's.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema file_read_schema();

}  // namespace stoker::ops
