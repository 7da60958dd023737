// copy_to_device: a CPU batch copied to the GPU (`.gpu()` in Python; inserted by the pipeline
// builder where a gpu operator takes CPU data).
#pragma once

#include "stoker/ops/operator.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema copy_to_device_schema();

// A device copy of CPU batch `in` in `out` (allocated by the caller on the device with the same
// shapes): gathered into one pinned staging buffer on the pool's threads, then one asynchronous
// copy on ws.stream.
void upload_batch(Workspace& ws, const Batch& in, Batch& out);

}  // namespace stoker::ops
