#include "stoker/core/affinity.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "stoker/core/error.hpp"

namespace stoker {
namespace {

std::string error_of(const std::vector<int>& cores) {
  try {
    ScopedAffinity scope(cores, "cpu_affinity");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Affinity, FormatCoresWritesRunsAsRanges) {
  EXPECT_EQ(format_cores({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10,11");
  EXPECT_EQ(format_cores({5}), "5");
  EXPECT_EQ(format_cores({}), "");
}

#ifdef __linux__
TEST(Affinity, ThreadNamesAreSetAndCutToFifteenCharacters) {
  std::string short_name, long_name;
  std::thread([&] {
    set_thread_name("stoker-gpu0");
    short_name = thread_name();
    set_thread_name("stoker-a-much-longer-name");
    long_name = thread_name();
  }).join();
  EXPECT_EQ(short_name, "stoker-gpu0");
  EXPECT_EQ(long_name, "stoker-a-much-l");  // Linux keeps 15 characters; the rest is cut
}

TEST(Affinity, ThreadsStartedInTheScopeKeepItsCoresAndTheCallerGetsItsOwnBack) {
  const std::vector<int> mine = thread_affinity();
  ASSERT_FALSE(mine.empty());
  const int core = mine.back();
  std::vector<int> in_thread, in_grandchild;
  {
    ScopedAffinity scope({core}, "cpu_affinity");
    EXPECT_EQ(thread_affinity(), std::vector<int>{core});
    std::thread t([&] {
      in_thread = thread_affinity();
      std::thread g([&] { in_grandchild = thread_affinity(); });
      g.join();
    });
    t.join();
  }
  EXPECT_EQ(in_thread, std::vector<int>{core});
  EXPECT_EQ(in_grandchild, std::vector<int>{core});
  EXPECT_EQ(thread_affinity(), mine);
}

TEST(Affinity, NoCoresChangeNothing) {
  const std::vector<int> mine = thread_affinity();
  {
    ScopedAffinity scope({}, "cpu_affinity");
    EXPECT_EQ(thread_affinity(), mine);
  }
  EXPECT_EQ(thread_affinity(), mine);
}

TEST(Affinity, CoresThatDoNotExistAreRefusedByNumber) {
  const std::vector<int> mine = thread_affinity();
  EXPECT_NE(error_of({mine.front(), 100000})
                .find("cpu_affinity: core 100000 does not exist "
                      "(this machine's cores are 0-"),
            std::string::npos)
      << error_of({mine.front(), 100000});
  EXPECT_NE(error_of({-1}).find("cpu_affinity: core -1 does not exist"), std::string::npos);
  EXPECT_EQ(thread_affinity(), mine);  // a refused request leaves the caller as it was
}
#endif

}  // namespace
}  // namespace stoker
