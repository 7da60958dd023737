#include "stoker/ops/io/external_source.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class ExternalSource final : public Operator, public InputFeed {
 public:
  explicit ExternalSource(const OpSpec& spec) : Operator(spec) {
    if (spec.has_arg("dtype")) dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
    layout_ = spec.arg<std::string>("layout");
  }

  void feed(Batch batch) override {
    if (dtype_) {
      STOKER_ENFORCE(batch.dtype() == *dtype_, TypeError, "external_source '", spec_.name,
                     "': expected dtype ", dtype_name(*dtype_), ", got ",
                     dtype_name(batch.dtype()));
    }
    if (!layout_.empty()) {
      for (int i = 0; i < batch.size(); ++i)
        STOKER_ENFORCE(batch.shape(i).ndim() == int(layout_.size()), ValueError,
                       "external_source '", spec_.name, "': sample ", i, " has shape ",
                       batch.shape(i).to_string(), ", which does not match layout '", layout_, "'");
      batch.set_layout(layout_);
    }
    push(Item{std::move(batch), false});
  }
  void feed_end() override { push(Item{{}, true}); }
  void cancel() override {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    ready_.notify_all();
  }
  size_t queued() const override {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }

  void run(Workspace& ws) override {
    Item item;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return cancelled_ || !queue_.empty(); });
      if (cancelled_) throw EndOfData();
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    if (item.end) throw EndOfData();
    STOKER_ENFORCE(item.batch.size() == ws.batch_size, ValueError, "external_source '", spec_.name,
                   "': fed a batch of ", item.batch.size(),
                   " samples, but the pipeline's batch_size is ", ws.batch_size);
    ws.outputs.push_back(std::move(item.batch));
  }

 private:
  struct Item {
    Batch batch;
    bool end = false;
  };
  void push(Item item) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
    ready_.notify_all();
  }

  std::optional<DType> dtype_;
  std::string layout_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Item> queue_;
  bool cancelled_ = false;
};

}  // namespace

OpSchema external_source_schema() {
  return {
      .name = "external_source",
      .doc =
          "Batches supplied from outside the pipeline: in Python by `source` (a callable "
          "returning a batch, or an iterable of batches); a batch is a list of arrays or one "
          "array whose first axis is the batch. Raising StopIteration ends the epoch.",
      .outputs = {"data"},
      .args = {{"dtype", ArgType::kDType, "Expected dtype (checked when given).", std::nullopt,
                false, true},
               {"layout", ArgType::kString, "Layout given to the data, e.g. 'HWC'.",
                std::string()}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ExternalSource>(s); },
  };
}

}  // namespace stoker::ops
