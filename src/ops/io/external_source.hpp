// external_source: batches fed from outside the pipeline (a Python callable or iterable, or
// C++ code through Pipeline::feed_input).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema external_source_schema();

// The queue between the thread that feeds an input operator (its InputFeed calls) and its run()
// on a pipeline stage's thread: what was fed, in order, and how many batches it makes
// (InputFeed::batches_fed). external_source queues batches and end marks; the video input
// queues videos and ends the epoch where the queue runs dry after feed_end (finish()).
template <class Item>
class FeedQueue {
 public:
  // Appends `item`, which makes `batches` batches.
  void push(Item item, int64_t batches) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
    batches_ += batches;
    ready_.notify_all();
  }
  // take() ends (nullopt) once the queue is empty, until resume().
  void finish() {
    std::lock_guard lock(mutex_);
    finished_ = true;
    ready_.notify_all();
  }
  void resume() {
    std::lock_guard lock(mutex_);
    finished_ = false;
  }
  // The pipeline is shutting down: take() returns nullopt from now on.
  void cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    ready_.notify_all();
  }
  // Drops the items at the front for which `drop(item)` holds.
  template <class Pred>
  void drop_front_while(Pred drop) {
    std::lock_guard lock(mutex_);
    while (!queue_.empty() && drop(queue_.front())) queue_.pop_front();
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }
  int64_t batches() const {
    std::lock_guard lock(mutex_);
    return batches_;
  }
  // The first item, waiting for one; nullopt when cancelled, or finished with none queued.
  std::optional<Item> take() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return cancelled_ || finished_ || !queue_.empty(); });
    if (cancelled_ || queue_.empty()) return std::nullopt;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    return item;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Item> queue_;
  int64_t batches_ = 0;
  bool finished_ = false, cancelled_ = false;
};

}  // namespace stoker::ops
