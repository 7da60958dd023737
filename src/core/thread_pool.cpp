#include "stoker/core/thread_pool.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>

#include "stoker/core/affinity.hpp"
#include "stoker/core/error.hpp"

namespace stoker {

namespace {
std::atomic<bool> forked_child{false};
// Registered once, when the library loads: marks the child of every later fork.
[[maybe_unused]] const bool fork_handler_registered = [] {
  return pthread_atfork(nullptr, nullptr, [] { forked_child.store(true); }) == 0;
}();
}  // namespace

bool in_forked_child() { return forked_child.load(); }

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

void thread_start_failed(const std::string& what, int index, int count,
                         const std::system_error& why) {
  throw RuntimeError(detail::concat(
      "cannot start thread ", index, " of ", count, " for ", what, ": ", why.code().message(),
      " (the system refused a new thread: lower the number of threads asked for, or raise the "
      "process's limits: ulimit -u, ulimit -v)"));
}

ThreadPool::ThreadPool(int num_threads, const std::string& what) {
  STOKER_ENFORCE(num_threads >= 1, ValueError, "num_threads must be at least 1, got ", num_threads);
  active_limit_ = num_threads;
  // Reserved first: growing the vector after a thread started could throw with the thread
  // still joinable.
  workers_.reserve(size_t(num_threads - 1));
  try {
    for (int t = 1; t < num_threads; ++t)
      workers_.push_back(start_thread(what, t, num_threads, [this, t] { worker_loop(t); }));
  } catch (...) {
    // The destructor does not run for a constructor that throws: the started workers wait on
    // wake_, whose destruction would block for ever.
    stop_workers();
    throw;
  }
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

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
}

ThreadPool::Job* ThreadPool::open_job() const {
  for (Job* j : jobs_)
    if (j->next < j->n) return j;
  return nullptr;
}

void ThreadPool::work(Job& job, int thread_index) {
  for (;;) {
    int64_t i;
    {
      std::lock_guard lock(mutex_);
      if (job.next >= job.n) return;
      i = job.next++;
    }
    try {
      (*job.fn)(i, thread_index);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (job.error_index < 0 || i < job.error_index) {
        job.error_index = i;
        job.error = std::current_exception();
      }
    }
    std::lock_guard lock(mutex_);
    if (++job.finished == job.n) done_.notify_all();
  }
}

void ThreadPool::worker_loop(int thread_index) {
  set_thread_name("stoker-pool" + std::to_string(thread_index));
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      // Parked workers (beyond the active limit) take no work.
      wake_.wait(lock, [&] {
        return stop_ || (thread_index < active_limit_ && (job = open_job()) != nullptr);
      });
      if (stop_) return;
      ++job->workers;
    }
    work(*job, thread_index);
    std::lock_guard lock(mutex_);
    if (--job->workers == 0) done_.notify_all();
  }
}

void ThreadPool::run_here(int64_t n, const std::function<void(int64_t, int)>& fn) {
  std::unique_lock call_lock(call_mutex_, std::defer_lock);
  if (!concurrent_) call_lock.lock();
  for (int64_t i = 0; i < n; ++i) fn(i, 0);
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int)>& fn) {
  if (n <= 0) return;
  std::unique_lock call_lock(call_mutex_, std::defer_lock);
  if (!concurrent_) call_lock.lock();
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  Job job{&fn, n};
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(&job);
  }
  wake_.notify_all();
  work(job, 0);
  {
    // Wait for all indices and for every worker to leave work(), so that the job (and fn, a
    // reference to the caller's function) is never touched after we return.
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return job.finished == job.n && job.workers == 0; });
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace stoker
