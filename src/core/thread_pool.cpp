#include "stoker/core/thread_pool.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>

#include "stoker/core/error.hpp"

namespace stoker {

double thread_cpu_seconds(const std::thread& t) {
  clockid_t clock;
  timespec ts{};
  // native_handle() is not const, though reading it changes nothing.
  if (!t.joinable() ||
      pthread_getcpuclockid(const_cast<std::thread&>(t).native_handle(), &clock) != 0 ||
      clock_gettime(clock, &ts) != 0)
    return 0;
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double ThreadPool::workers_cpu_seconds() const {
  double s = 0;
  for (const auto& w : workers_) s += thread_cpu_seconds(w);
  return s;
}

ThreadPool::ThreadPool(int num_threads) {
  STOKER_ENFORCE(num_threads >= 1, ValueError, "num_threads must be at least 1, got ", num_threads);
  active_limit_ = num_threads;
  for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
}

void ThreadPool::set_active_threads(int k) {
  {
    std::lock_guard lock(mutex_);
    active_limit_ = std::clamp(k, 1, num_threads());
  }
  wake_.notify_all();
}

int ThreadPool::active_threads() const {
  std::lock_guard lock(mutex_);
  return active_limit_;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::work(int thread_index) {
  for (;;) {
    int64_t i;
    {
      std::lock_guard lock(mutex_);
      if (next_ >= n_) return;
      i = next_++;
    }
    try {
      (*fn_)(i, thread_index);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (error_index_ < 0 || i < error_index_) {
        error_index_ = i;
        error_ = std::current_exception();
      }
    }
    std::lock_guard lock(mutex_);
    if (++finished_ == n_) done_.notify_all();
  }
}

void ThreadPool::worker_loop(int thread_index) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      // Parked workers (beyond the active limit) skip the calls made while they were parked.
      wake_.wait(lock,
                 [&] { return stop_ || (generation_ != seen && thread_index < active_limit_); });
      if (stop_) return;
      seen = generation_;
      ++active_workers_;
    }
    work(thread_index);
    std::lock_guard lock(mutex_);
    if (--active_workers_ == 0) done_.notify_all();
  }
}

void ThreadPool::run_here(int64_t n, const std::function<void(int64_t, int)>& fn) {
  std::lock_guard call_lock(call_mutex_);
  for (int64_t i = 0; i < n; ++i) fn(i, 0);
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int)>& fn) {
  if (n <= 0) return;
  std::lock_guard call_lock(call_mutex_);
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    finished_ = 0;
    error_index_ = -1;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  work(0);
  std::exception_ptr error;
  {
    // Wait for all indices and for every worker to leave work(), so that fn_ (a reference to
    // the caller's function) is never touched after we return.
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_ == n_ && active_workers_ == 0; });
    fn_ = nullptr;
    n_ = 0;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace stoker
