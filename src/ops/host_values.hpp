// Outputs computed on the host (shapes, properties, constants) written into an operator's
// output batch, whichever memory the backend allocated it in.
#pragma once

#include <cstddef>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// Copies `bytes` of host memory to the start of `out` (an output of this operator, contiguous
// as add_output makes it): a memcpy for host outputs; for device outputs one asynchronous copy
// on ws.stream through pinned staging, so `data` may be freed when this returns.
void copy_host_values(Workspace& ws, Batch& out, const void* data, size_t bytes);

}  // namespace stoker::ops
