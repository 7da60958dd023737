#include "stoker/pipeline/iteration_queue.hpp"

#include <chrono>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

std::optional<double> IterationQueue::wait_for_room() {
  const auto t = Clock::now();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || int(items_.size()) < capacity_; });
  if (stopped_) return std::nullopt;
  return since(t);
}

bool IterationQueue::push(Iteration it, bool in_order) {
  const bool failed = bool(it.error);
  {
    std::unique_lock lock(mutex_);
    if (in_order) {
      changed_.wait(lock, [&] { return stopped_ || next_in_order_ == it.number; });
      if (stopped_) return false;
      ++next_in_order_;
      if (failed_) {  // nothing is delivered after a failed iteration
        lock.unlock();
        changed_.notify_all();
        return false;
      }
    }
    if (stopped_) return false;  // EndOfData from a cancelled feed, or a late result nobody wants
    if (failed) {
      failed_ = true;
      try {
        std::rethrow_exception(it.error);
      } catch (const std::exception& e) {
        failure_ = e.what();
      } catch (...) {
        failure_ = "unknown error";
      }
    }
    items_.push_back(std::move(it));
  }
  changed_.notify_all();
  return !failed;
}

std::optional<double> IterationQueue::wait_for_item() {
  const auto t = Clock::now();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || !items_.empty(); });
  if (stopped_) return std::nullopt;
  return since(t);
}

Iteration IterationQueue::pop() {
  Iteration it;
  {
    std::lock_guard lock(mutex_);
    STOKER_ASSERT(!items_.empty(), "pop() from an empty iteration queue");
    it = std::move(items_.front());
    items_.pop_front();
  }
  changed_.notify_all();  // a giver may run ahead again
  return it;
}

Iteration IterationQueue::take(const std::function<bool()>& interrupted, double& waited) {
  const auto t = Clock::now();
  std::unique_lock lock(mutex_);
  // stopped_: closed from another thread while this one waits (it must not wait forever).
  const auto ready = [&] { return !items_.empty() || failed_ || stopped_; };
  if (!interrupted) {
    changed_.wait(lock, ready);
  } else {
    while (!changed_.wait_for(lock, std::chrono::milliseconds(50), ready)) {
      lock.unlock();  // the check may take the caller's locks (Python's GIL)
      const bool stop = interrupted();
      lock.lock();
      if (stop) throw Interrupted();
    }
  }
  waited = since(t);
  if (items_.empty() && !failed_) throw RuntimeError("the pipeline was closed");
  if (items_.empty()) throw RuntimeError("the pipeline stopped after an earlier error: " + failure_);
  Iteration it = std::move(items_.front());
  items_.pop_front();
  lock.unlock();
  changed_.notify_all();
  return it;
}

void IterationQueue::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

size_t IterationQueue::size() const {
  std::lock_guard lock(mutex_);
  return items_.size();
}

int IterationQueue::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_;
}

void IterationQueue::set_capacity(int capacity) {
  {
    std::lock_guard lock(mutex_);
    capacity_ = capacity;
  }
  changed_.notify_all();
}

}  // namespace stoker::pipeline
