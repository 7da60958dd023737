#include "stoker/readers/prefetcher.hpp"

#include "stoker/core/error.hpp"

namespace stoker::readers {

Prefetcher::Prefetcher(int threads, int depth, Draw draw, Load load)
    : draw_(std::move(draw)), load_(std::move(load)), depth_(size_t(depth)) {
  STOKER_ENFORCE(threads >= 1 && depth >= 1, ValueError,
                 "a prefetcher needs at least one thread and a depth of at least one (got ",
                 threads, " and ", depth, ")");
  threads_.reserve(size_t(threads));
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { work(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  for (auto& t : threads_) t.join();
}

void Prefetcher::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    room_.wait(lock, [&] { return stop_ || window_.size() < depth_; });
    if (stop_) return;
    Entry& e = window_.emplace_back();
    try {
      e.sample.index = draw_();
    } catch (...) {
      e.sample.error = std::current_exception();
      e.done = true;
      ready_.notify_all();
      continue;
    }
    lock.unlock();
    try {
      load_(e.sample);
    } catch (...) {
      e.sample.error = std::current_exception();
    }
    lock.lock();
    e.done = true;
    ready_.notify_all();
  }
}

LoadedSample Prefetcher::pop() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return !window_.empty() && window_.front().done; });
  LoadedSample s = std::move(window_.front().sample);
  window_.pop_front();
  room_.notify_one();
  return s;
}

}  // namespace stoker::readers
