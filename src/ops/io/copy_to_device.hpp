// copy_to_device: a CPU batch copied to the GPU (`.gpu()` in Python; inserted by the pipeline
// builder where a gpu operator takes CPU data).
#pragma once

#include "stoker/ops/schema.hpp"

#include <memory>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {

OpSchema copy_to_device_schema();

// A device copy of CPU batch `in` in `out` (allocated by the caller on the device with the same
// shapes): gathered into one pinned staging buffer on the pool's threads, then one asynchronous
// copy on ws.stream.
void upload_batch(Workspace& ws, const Batch& in, Batch& out);

// The mixed backend of an operator made of its CPU backend: runs it on the pipeline's threads
// and copies its outputs to the device. (Decoders use it until their GPU decoders take over.)
class CpuThenUpload final : public Operator {
 public:
  explicit CpuThenUpload(const OpSpec& spec);
  void run(Workspace& ws) override;
  std::optional<std::string> save_state() const override { return cpu_->save_state(); }
  void restore_state(const std::string& s) override { cpu_->restore_state(s); }

 private:
  std::unique_ptr<Operator> cpu_;
};

}  // namespace stoker::ops
