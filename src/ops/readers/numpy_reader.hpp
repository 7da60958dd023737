// readers.numpy: arrays from .npy files.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema numpy_reader_schema();
}  // namespace stoker::ops
