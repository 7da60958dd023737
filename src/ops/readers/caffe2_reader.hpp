// readers.caffe2: Caffe2 LMDB databases of TensorProtos (image + labels).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema caffe2_reader_schema();
}  // namespace stoker::ops
