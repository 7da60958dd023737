// readers.webdataset: samples grouped from tar shards, one output per extension group.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema webdataset_reader_schema();
}  // namespace stoker::ops
