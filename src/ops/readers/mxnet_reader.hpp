// readers.mxnet: image records from MXNet RecordIO files.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema mxnet_reader_schema();
}  // namespace stoker::ops
