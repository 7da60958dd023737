// readers.tfrecord: tf.train.Example records from TFRecord files, one output per feature.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema tfrecord_reader_schema();
}  // namespace stoker::ops
