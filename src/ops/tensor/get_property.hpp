// get_property: a sample's metadata as data (as DALI): key "source_info" (the file or record
// it came from) or "layout", each a 1-D uint8 byte string per sample.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema get_property_schema();
}  // namespace stoker::ops
