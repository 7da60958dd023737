// copy_to_device: a CPU batch copied to the GPU (`.gpu()` in Python; inserted by the pipeline
// builder where a gpu operator takes CPU data).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema copy_to_device_schema();
}  // namespace stoker::ops
