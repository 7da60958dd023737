// readers.caffe: Caffe LMDB databases of Datum records.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema caffe_reader_schema();
}  // namespace stoker::ops
