// ThreadPool: a fixed set of worker threads for per-sample work. parallel_for() blocks until
// all indices are done; the calling thread works too. Errors are collected per index and the
// lowest index's error is rethrown, so the reported sample does not depend on scheduling.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace stoker {

// The system refused thread `index` of the `count` that `what` asked for (no memory for its
// stack under ulimit -v, the process's thread limit): a RuntimeError that says which thread,
// of how many, and the system's reason.
[[noreturn]] void thread_start_failed(const std::string& what, int index, int count,
                                      const std::system_error& why);

// std::thread(fn), with the system's refusal turned into thread_start_failed()'s error. The
// pool's workers, the CPU lanes and readers' I/O threads start through here (the executor
// converts the device stages' and the GPU monitor's refusals alike), and each caller stops and
// joins the threads it already started before passing the error on: a thread that cannot
// start must not leave the others waiting (joinable std::threads destroyed abort the process;
// condition variables destroyed under waiting threads never return).
template <typename F>
std::thread start_thread(const std::string& what, int index, int count, F&& fn) {
  try {
    return std::thread(std::forward<F>(fn));
  } catch (const std::system_error& e) {
    thread_start_failed(what, index, count, e);
  }
}

// True in a child process forked after stoker started (a torch DataLoader worker forked from a
// training process): the threads of the objects it inherited run only in the parent, so the
// child must not join them or wait for them. The top-level objects (Pipeline) are leaked there
// instead of destroyed.
bool in_forked_child();

// CPU seconds thread `t` (running, not joined) has used since it started; 0 where the system
// cannot say.
double thread_cpu_seconds(const std::thread& t);

class ThreadPool {
 public:
  // `num_threads` ≥ 1 counts the calling thread: a pool of 1 runs everything inline. `what`
  // names the pool in the error thrown when the system cannot start one of its threads (the
  // threads started by then are joined first).
  explicit ThreadPool(int num_threads, const std::string& what = "a thread pool");
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return int(workers_.size()) + 1; }
  // How many threads take part in parallel_for (the caller and workers 1..k-1; the others
  // stay parked): for automatic tuning. Thread indices, and so per-thread scratch sized by
  // num_threads(), are unchanged. Clamped to [1, num_threads()].
  void set_active_threads(int k);
  int active_threads() const;
  // CPU seconds the worker threads have used since they started (the callers' share of
  // parallel_for is on the callers' threads).
  double workers_cpu_seconds() const;

  // Calls fn(index, thread_index) for every index in [0, n); thread_index is in
  // [0, num_threads()) and stable for the duration of one call (use it for per-thread
  // scratch). Calls from several threads are serialised, unless allow_concurrent_calls().
  void parallel_for(int64_t n, const std::function<void(int64_t, int)>& fn);
  // The same contract, all of it on the calling thread as thread 0 (for work too small to
  // share): serialised with parallel_for, whose caller is thread 0 too (unless
  // allow_concurrent_calls).
  void run_here(int64_t n, const std::function<void(int64_t, int)>& fn);
  // Lets parallel_for and run_here calls from several threads run at once (the executor's CPU
  // lanes): each call is a job, and a worker takes indices from the oldest job that has some
  // left, so the threads that finished one call's share help with another's instead of
  // waiting. Every caller is thread 0 of its own call: concurrent callers must not share
  // per-thread state (the lanes never run one operator twice at once). Set before any call.
  void allow_concurrent_calls(bool on) { concurrent_ = on; }

 private:
  struct Job {
    const std::function<void(int64_t, int)>* fn;
    int64_t n = 0, next = 0, finished = 0;
    int workers = 0;  // workers inside work() for this job
    int64_t error_index = -1;
    std::exception_ptr error;
  };
  void worker_loop(int thread_index);
  void stop_workers();  // stops and joins the workers started
  void work(Job& job, int thread_index);
  Job* open_job() const;  // the oldest job with indices left (under mutex_), or null

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // one parallel_for at a time, unless concurrent_
  bool concurrent_ = false;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<Job*> jobs_;  // the calls under way, oldest first (under mutex_)
  int active_limit_ = 0;    // threads taking part (set in the constructor: all of them)
  bool stop_ = false;
};

}  // namespace stoker
