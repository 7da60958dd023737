#include "stoker/ops/io/external_source.hpp"

#include "stoker/ops/io/copy_to_device.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// One class for both backends. On the CPU the fed batch is the output. On the GPU (in the gpu
// stage) fed device data is the output once the stage's stream has waited for it (its ready
// event: the producer's work) and is recorded on the buffers (they go back to their owner only
// after this stream's work); fed host data is uploaded.
class ExternalSource final : public Operator, public InputFeed {
 public:
  explicit ExternalSource(const OpSpec& spec) : Operator(spec) {
    if (spec.has_arg("dtype")) dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
    layout_ = spec.arg<std::string>("layout");
    ndim_ = int(spec.arg<int64_t>("ndim"));
    STOKER_ENFORCE(ndim_ < 0 || layout_.empty() || ndim_ == int(layout_.size()), ValueError,
                   "external_source '", spec.name, "': ndim=", ndim_, " does not match layout '",
                   layout_, "'");
  }

  void check(const Batch& batch) const override {
    const std::string who = "external_source '" + spec_.name + "'";
    STOKER_ENFORCE(batch.size() == spec_.batch_size, ValueError, who, ": fed a batch of ",
                   batch.size(), " samples, but the pipeline's batch_size is ", spec_.batch_size);
    STOKER_ENFORCE(batch.memory() != MemoryKind::kDevice || spec_.backend == Backend::kGpu,
                   TypeError, who,
                   " runs on the CPU but got GPU data; use device='gpu' to feed GPU data");
    if (dtype_) {
      STOKER_ENFORCE(batch.dtype() == *dtype_, TypeError, who, ": expected dtype ",
                     dtype_name(*dtype_), ", got ", dtype_name(batch.dtype()));
    }
    for (int i = 0; ndim_ >= 0 && i < batch.size(); ++i)
      STOKER_ENFORCE(batch.shape(i).ndim() == ndim_, ValueError, who, ": sample ", i, " has shape ",
                     batch.shape(i).to_string(), ", but ndim=", ndim_, " was declared");
    for (int i = 0; !layout_.empty() && i < batch.size(); ++i)
      STOKER_ENFORCE(batch.shape(i).ndim() == int(layout_.size()), ValueError, who, ": sample ", i,
                     " has shape ", batch.shape(i).to_string(), ", which does not match layout '",
                     layout_, "'");
  }

  void feed(Batch batch) override {
    check(batch);
    if (!layout_.empty()) batch.set_layout(layout_);
    queue_.push(Item{std::move(batch), false}, 1);
  }
  // An end mark, in order with the batches: batches fed after it start the next epoch.
  void feed_end() override { queue_.push(Item{{}, true}, 0); }
  void discard_end() override {
    queue_.drop_front_while([](const Item& item) { return item.end; });
  }
  void cancel() override { queue_.cancel(); }
  size_t queued() const override { return queue_.size(); }
  int64_t batches_fed() const override { return queue_.batches(); }

  void run(Workspace& ws) override {
    auto item = queue_.take();
    if (!item || item->end) throw EndOfData();
    Batch& in = item->batch;
    if (spec_.backend != Backend::kGpu) {
      ws.outputs.push_back(std::move(in));
    } else if (in.memory() == MemoryKind::kDevice) {
      if (in.ready_event()) in.ready_event()->wait_on(ws.stream);
      in.set_ready_event(nullptr);  // this stream's order covers it from here
      in.record_stream(ws.stream);
      ws.outputs.push_back(std::move(in));
    } else {
      Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
      upload_batch(ws, in, out);
      out.copy_source_info(in);
      in.record_use(ws.stream);  // the uploads are its last use: one event for all its arrays
    }
  }

 private:
  struct Item {
    Batch batch;
    bool end = false;
  };

  std::optional<DType> dtype_;
  std::string layout_;
  int ndim_ = -1;  // -1: any
  FeedQueue<Item> queue_;
};

}  // namespace

OpSchema external_source_schema() {
  auto make = [](const OpSpec& s) { return std::make_unique<ExternalSource>(s); };
  return {
      .name = "external_source",
      .doc =
          "Batches supplied from outside the pipeline: in Python by `source` (a callable "
          "returning a batch, or an iterable of batches); a batch is a list of arrays or one "
          "array whose first axis is the batch. Raising StopIteration ends the epoch. On the "
          "GPU (device='gpu') it takes device data (DLPack, CUDA array interface) ordered after "
          "the producer's stream, or host data, which it uploads.",
      .outputs = {"data"},
      .args = {{"dtype", ArgType::kDType, "Expected dtype (checked when given).", std::nullopt,
                false, true},
               {"layout", ArgType::kString, "Layout given to the data, e.g. 'HWC'.", std::string()},
               {"ndim", ArgType::kInt,
                "Expected number of dimensions of each sample (checked when given; -1: any).",
                int64_t{-1}}},
      .make_cpu = make,
      .make_gpu = make,
      .external_input = true,
  };
}

}  // namespace stoker::ops
