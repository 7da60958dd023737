#include "stoker/core/thread_pool.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "stoker/core/error.hpp"

namespace stoker {
namespace {

TEST(ThreadPool, RunsEveryIndexOnce) {
  for (int threads : {1, 2, 5}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(1000);
    std::atomic<int> max_thread{0};
    pool.parallel_for(1000, [&](int64_t i, int t) {
      hits[size_t(i)]++;
      int m = max_thread.load();
      while (t > m && !max_thread.compare_exchange_weak(m, t)) {
      }
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    EXPECT_LT(max_thread.load(), threads);
  }
}

TEST(ThreadPool, RethrowsTheLowestFailingIndex) {
  ThreadPool pool(4);
  for (int rep = 0; rep < 20; ++rep) {
    try {
      pool.parallel_for(64, [](int64_t i, int) {
        if (i == 17 || i == 40 || i == 63) throw ValueError("bad " + std::to_string(i));
      });
      FAIL();
    } catch (const ValueError& e) {
      ASSERT_STREQ(e.what(), "bad 17");
    }
  }
}

TEST(ThreadPool, ReusableAfterErrorsAndDestroyedIdle) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(3, [](int64_t, int) { throw IOError("x"); }), IOError);
  std::atomic<int> n{0};
  pool.parallel_for(10, [&](int64_t, int) { n++; });
  EXPECT_EQ(n.load(), 10);
  EXPECT_THROW(ThreadPool(0), ValueError);
}

// run_here: every index on the calling thread as thread 0, and never while another thread's
// parallel_for (whose caller is thread 0 too) is running.
TEST(ThreadPool, RunHereRunsOnTheCallerAfterOtherCallsFinish) {
  ThreadPool pool(3);
  std::atomic<bool> release{false}, inside{false}, ran_here{false};
  std::thread other([&] {
    pool.parallel_for(3, [&](int64_t i, int) {
      if (i != 0) return;
      inside = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  });
  while (!inside) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread here([&] {
    const auto me = std::this_thread::get_id();
    std::vector<int> seen;
    pool.run_here(5, [&](int64_t i, int t) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      EXPECT_EQ(t, 0);
      seen.push_back(int(i));
    });
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4}));
    ran_here = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(ran_here.load());  // waits for the other call
  release = true;
  other.join();
  here.join();
  EXPECT_TRUE(ran_here.load());
}

// allow_concurrent_calls: two callers' jobs run at once; the workers free of one call take the
// other's indices (here: call A's index 0 blocks until call B finished, so B can only finish
// beside A); each call's errors stay its own.
TEST(ThreadPool, ConcurrentCallsShareTheWorkers) {
  ThreadPool pool(3);
  pool.allow_concurrent_calls(true);
  std::atomic<bool> b_done{false}, a_inside{false};
  std::vector<std::atomic<int>> hits_a(8), hits_b(200);
  std::atomic<int> b_by_workers{0};
  std::thread a([&] {
    pool.parallel_for(8, [&](int64_t i, int) {
      hits_a[size_t(i)]++;
      if (i == 0) {  // held until B is done
        a_inside = true;
        while (!b_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  });
  while (!a_inside) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread b([&] {
    pool.parallel_for(200, [&](int64_t i, int t) {
      hits_b[size_t(i)]++;
      if (t != 0) b_by_workers++;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    b_done = true;
  });
  b.join();
  a.join();
  for (auto& h : hits_a) ASSERT_EQ(h.load(), 1);
  for (auto& h : hits_b) ASSERT_EQ(h.load(), 1);
  EXPECT_GT(b_by_workers.load(), 0);  // while A's caller waited, its workers served B
  // Errors: each call rethrows its own lowest failing index.
  std::thread c([&] {
    EXPECT_THROW(pool.parallel_for(50,
                                   [](int64_t i, int) {
                                     if (i == 7) throw IOError("c7");
                                   }),
                 IOError);
  });
  try {
    pool.parallel_for(50, [](int64_t i, int) {
      if (i == 9 || i == 30) throw ValueError("d" + std::to_string(i));
    });
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "d9");
  }
  c.join();
}

// Parked threads take no work; raised again, they do; indices stay below num_threads().
TEST(ThreadPool, ActiveThreadsLimitWhoWorks) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.active_threads(), 4);
  auto threads_used = [&] {
    std::mutex m;
    std::set<int> used;
    pool.parallel_for(64, [&](int64_t, int t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard lock(m);
      used.insert(t);
    });
    return used;
  };
  pool.set_active_threads(2);
  EXPECT_EQ(pool.active_threads(), 2);
  for (int rep = 0; rep < 3; ++rep) {
    auto used = threads_used();
    EXPECT_TRUE(used.count(0) || used.count(1));
    EXPECT_EQ(used.count(2) + used.count(3), 0u);
  }
  pool.set_active_threads(99);  // clamped
  EXPECT_EQ(pool.active_threads(), 4);
  EXPECT_EQ(threads_used().size(), 4u);
  pool.set_active_threads(0);
  EXPECT_EQ(pool.active_threads(), 1);
  EXPECT_EQ(threads_used(), std::set<int>{0});
}

double this_thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Workers' CPU time counts their work, not their idle waits. The work is measured in CPU time
// (each index spins until its thread has used 20 ms), so a busy machine cannot fail the test.
TEST(ThreadPool, WorkersCpuSecondsCountTheirWork) {
  ThreadPool pool(3);
  const double before = pool.workers_cpu_seconds();
  EXPECT_GE(before, 0.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // idle: no CPU
  EXPECT_LT(pool.workers_cpu_seconds() - before, 0.05);
  std::atomic<int> worker_indices{0};
  pool.parallel_for(6, [&](int64_t, int thread) {
    if (thread != 0) worker_indices += 1;  // the caller's share is the caller's CPU time
    const double end = this_thread_cpu_seconds() + 0.02;
    volatile uint64_t x = 0;
    while (this_thread_cpu_seconds() < end) x = x + 1;
  });
  if (worker_indices == 0) GTEST_SKIP() << "the caller took every index";
  EXPECT_GE(pool.workers_cpu_seconds() - before, 0.02 * worker_indices - 1e-3);
  std::thread idle([] {});
  idle.join();
  EXPECT_EQ(thread_cpu_seconds(idle), 0.0);  // a joined thread: nothing to read
}

// The process's address space now, in bytes (/proc/self/statm's first field).
size_t address_space_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * size_t(sysconf(_SC_PAGESIZE));
}

size_t thread_count() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// In a child process whose address space is capped (as under ulimit -v): ThreadPool(1000)
// fails with the error, then a smaller pool starts and works. Exits 0 when all went so.
[[noreturn]] void refused_pool_child() {
  const rlimit cap{address_space_bytes() + (size_t(64) << 20), RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &cap);
  const size_t before = thread_count();
  try {
    ThreadPool pool(1000);
    std::fprintf(stderr, "1000 threads started under a 64 MiB cap\n");
    std::exit(2);
  } catch (const RuntimeError& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  const rlimit none{RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &none);
  ThreadPool after(4);
  std::atomic<int> sum{0};
  after.parallel_for(10, [&](int64_t i, int) { sum += int(i); });
  std::exit(thread_count() == before + 3 && sum == 45 ? 0 : 3);
}

// A thread the system refuses (no address space for its stack) is a RuntimeError naming the
// thread and the count asked for, and the workers already started are joined: before, the
// pool's condition variables were destroyed under the waiting workers and the constructor never
// returned.
TEST(ThreadPoolDeathTest, ThreadTheSystemRefusesIsAnErrorAndTheStartedOnesAreJoined) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve address space that a cap would refuse";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(refused_pool_child(), ::testing::ExitedWithCode(0),
              "cannot start thread [0-9]+ of 1000 for a thread pool: Resource temporarily "
              "unavailable");
}

}  // namespace
}  // namespace stoker
