#include "stoker/readers/prefetcher.hpp"

#include <algorithm>

#include "stoker/core/affinity.hpp"
#include "stoker/core/error.hpp"
#include "stoker/core/thread_pool.hpp"

namespace stoker::readers {

Prefetcher::Prefetcher(int threads, int depth, int group, Draw draw, Load load)
    : draw_(std::move(draw)),
      load_(std::move(load)),
      depth_(size_t(depth)),
      group_(size_t(std::min(group, depth))) {
  STOKER_ENFORCE(threads >= 1 && depth >= 1 && group >= 1, ValueError,
                 "a prefetcher needs at least one thread, a depth and a group of at least one "
                 "(got ",
                 threads, ", ", depth, " and ", group, ")");
  threads_.reserve(size_t(threads));  // no growth (which could throw) with a thread started
  try {
    for (int t = 0; t < threads; ++t)
      threads_.push_back(start_thread("the reader's I/O threads (num_io_threads)", t + 1, threads,
                                      [this] { work(); }));
  } catch (...) {
    // No destructor runs for a constructor that throws: the started threads (loading already)
    // must not be left waiting on room_.
    stop_threads();
    throw;
  }
}

Prefetcher::~Prefetcher() { stop_threads(); }

void Prefetcher::stop_threads() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void Prefetcher::work() {
  set_thread_name("stoker-io");
  std::unique_lock lock(mutex_);
  for (;;) {
    // Whole groups only: a thread woken by every pop would otherwise load one sample at a time.
    room_.wait(lock, [&] { return stop_ || pending_ + group_ <= depth_; });
    if (stop_) return;
    Group& g = window_.emplace_back();
    g.samples.resize(group_);
    pending_ += group_;
    std::exception_ptr error;
    for (auto& s : g.samples) {
      try {
        s.index = draw_();
      } catch (...) {  // the loader failed: every sample of the group carries it
        error = std::current_exception();
        break;
      }
    }
    lock.unlock();
    if (!error) {
      try {
        load_(g.samples);
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error)
      for (auto& s : g.samples)
        if (!s.error) s.error = error;
    lock.lock();
    g.done = true;
    ready_.notify_all();
  }
}

LoadedSample Prefetcher::pop() {
  std::unique_lock lock(mutex_);
  ready_.wait(lock, [&] { return !window_.empty() && window_.front().done; });
  Group& g = window_.front();
  LoadedSample s = std::move(g.samples[g.popped++]);
  if (g.popped == g.samples.size()) window_.pop_front();
  --pending_;
  // Wake a loader only when a whole group fits (its wait condition): waking one on every pop
  // cost a futex round trip per sample on the consumer's side.
  if (pending_ + group_ <= depth_) room_.notify_one();
  return s;
}

}  // namespace stoker::readers
