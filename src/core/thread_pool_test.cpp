#include "stoker/core/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace stoker
