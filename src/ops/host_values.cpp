#include "stoker/ops/host_values.hpp"

#include <cstring>

#include "stoker/core/cuda.hpp"

namespace stoker::ops {

void copy_host_values(Workspace& ws, Batch& out, const void* data, size_t bytes) {
  if (bytes == 0) return;
  STOKER_ASSERT(out.is_contiguous(), "copy_host_values needs a contiguous output");
  if (out.memory() != MemoryKind::kDevice) {
    std::memcpy(out.data(0), data, bytes);
    return;
  }
  auto staging = ws.pinned_pool->acquire(bytes);  // waits for its previous copy, if any
  std::memcpy(staging->data(), data, bytes);
  copy_to_device_async(out.data(0), staging->data(), bytes, ws.stream);
  staging->record_stream(ws.stream);
}

}  // namespace stoker::ops
