#include "stoker/ops/io/copy_to_device.hpp"

#include <cstring>

namespace stoker::ops {
namespace {
constexpr size_t kParallelGatherBytes = size_t(1) << 20;
}  // namespace

// The samples are gathered into one pinned staging buffer (in parallel: this is the CPU's part
// of the copy) and sent with one asynchronous copy on the stage's stream; the staging buffer
// is recycled only after that copy (its stream is recorded on it).
void upload_batch(Workspace& ws, const Batch& in, Batch& out) {
  const int n = in.size();
  std::vector<size_t> offsets;
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    offsets.push_back(total);
    total += in.sample(i).num_bytes();
  }
  if (total == 0) return;
  auto staging = ws.pinned_pool->acquire(total);  // waits for its previous copy, if any
  auto* p = static_cast<uint8_t*>(staging->data());
  auto gather = [&](int64_t i, int) {
    if (size_t bytes = in.sample(int(i)).num_bytes())
      std::memcpy(p + offsets[size_t(i)], in.data(int(i)), bytes);
  };
  // Small batches (labels, boxes) on this thread: the pool may be busy with the CPU stage's
  // decodes, and queueing behind them cost the mixed stage ~1 ms per batch of 256 labels.
  if (total < kParallelGatherBytes) {
    for (int i = 0; i < n; ++i) gather(i, 0);
  } else {
    ws.pool->parallel_for(n, gather);
  }
  if (out.is_contiguous()) {
    copy_to_device_async(out.data(0), p, total, ws.stream);
  } else {
    for (int i = 0; i < n; ++i)
      copy_to_device_async(out.data(i), p + offsets[size_t(i)], in.sample(i).num_bytes(),
                           ws.stream);
  }
  staging->record_stream(ws.stream);
}

namespace {

class CopyToDevice final : public Operator {
 public:
  using Operator::Operator;

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, in.dtype(), std::move(shapes), in.layout());
    upload_batch(ws, in, out);
  }
};

}  // namespace

OpSchema copy_to_device_schema() {
  return {
      .name = "copy_to_device",
      .doc =
          "Copies a CPU batch to the GPU (what `.gpu()` does; added automatically where a gpu "
          "operator takes CPU data). One pinned staging copy and one asynchronous transfer "
          "per batch; the output is contiguous. Under STOKER_FORCE_CPU=1 the data stays on "
          "the CPU.",
      .inputs = {"data"},
      .outputs = {"data"},
      .make_mixed = [](const OpSpec& s) { return std::make_unique<CopyToDevice>(s); },
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
