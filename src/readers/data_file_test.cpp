#include "stoker/readers/data_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "stoker/core/error.hpp"
#include "stoker/readers/prefetcher.hpp"

namespace stoker::readers {
namespace {

namespace fs = std::filesystem;

class DataFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("stoker_data_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "blob.bin").string();
    bytes_.resize((size_t(24) << 20) + 12345);  // more than kCoalesceMax + 3 MB
    std::mt19937 rng(7);
    for (auto& b : bytes_) b = uint8_t(rng());
    FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes_.data(), 1, bytes_.size(), f), bytes_.size());
    std::fclose(f);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Reads every [offset, offset+size) of `spans` and compares with the file's bytes.
  void expect_reads(const DataFile& file, const std::vector<std::pair<int64_t, int64_t>>& spans) {
    for (auto [off, size] : spans) {
      auto got = file.read(off, size, pool_);
      ASSERT_EQ(got.size, size_t(size));
      ASSERT_TRUE(size == 0 || std::memcmp(got.data, bytes_.data() + off, size_t(size)) == 0)
          << "offset " << off << " size " << size;
    }
  }

  std::vector<std::pair<int64_t, int64_t>> record_spans(int64_t record) const {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (int64_t off = 0; off + record <= int64_t(bytes_.size()); off += record)
      spans.push_back({off, record});
    return spans;
  }

  fs::path dir_;
  std::string path_;
  std::vector<uint8_t> bytes_;
  MemoryPool pool_{make_host_allocator()};
};

TEST_F(DataFileTest, SequentialShuffledAndLargeReadsMatchTheFileInEveryMode) {
  for (IoMode mode : {IoMode::kMmap, IoMode::kPread}) {
    for (bool read_ahead : {false, true}) {
      SCOPED_TRACE(mode == IoMode::kMmap ? "mmap" : "pread");
      DataFile file(path_, {mode, read_ahead});
      EXPECT_EQ(file.size(), int64_t(bytes_.size()));
      auto spans = record_spans(37'111);
      expect_reads(file, spans);
      std::shuffle(spans.begin(), spans.end(), std::mt19937(3));
      expect_reads(file, spans);
      // The whole file, empty reads, the tail.
      expect_reads(file, {{0, int64_t(bytes_.size())},
                          {5, 0},
                          {int64_t(bytes_.size()) - 1, 1},
                          {int64_t(bytes_.size()), 0}});
    }
  }
}

TEST_F(DataFileTest, RangesThatFollowOneAnotherAreReadTogether) {
  std::string other_path = (dir_ / "other.bin").string();
  fs::copy_file(path_, other_path);
  for (IoMode mode : {IoMode::kMmap, IoMode::kPread}) {
    DataFile file(path_, {mode, false}), other(other_path, {mode, false});
    const int64_t gap = kCoalesceGap;
    std::vector<FileRange> ranges = {
        {&file, 5000, 100},          // 0: run A (given out of order)
        {&file, 0, 1000},            // 1: run A
        {&other, 0, 10},             // 2: another file: run B
        {&file, 1000 + 50, 3000},    // 3: run A (a small gap)
        {&file, 4000, 2000},         // 4: run A (overlaps 3; a repeated record would too)
        {&file, 6000 + gap + 1, 7},  // 5: past the gap: run C
        {&file, 3'000'000, int64_t(kCoalesceMax)},  // 6: run D, alone at the size limit
        {&file, 3'000'000 + kCoalesceMax, 1},       // 7: would exceed it: run E
        {&file, 42, 0},                             // 8: empty, inside run A
    };
    auto got = read_ranges(ranges, pool_);
    ASSERT_EQ(got.size(), ranges.size());
    for (size_t k = 0; k < ranges.size(); ++k) {
      ASSERT_EQ(got[k].size, size_t(ranges[k].size)) << k;
      EXPECT_TRUE(got[k].size == 0 ||
                  std::memcmp(got[k].data, bytes_.data() + ranges[k].offset, got[k].size) == 0)
          << k;
    }
    if (mode == IoMode::kPread) {  // one buffer per run
      for (size_t k : {0, 3, 4, 8}) EXPECT_EQ(got[k].owner, got[1].owner) << k;
      std::set<Buffer*> owners;
      for (auto& g : got) owners.insert(g.owner.get());
      EXPECT_EQ(owners.size(), 5u);
    }
  }
}

TEST_F(DataFileTest, ConcurrentRangeReadersSeeTheRightBytes) {
  DataFile file(path_, {IoMode::kPread, false});
  auto spans = record_spans(4'099);
  std::atomic<size_t> next{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (size_t k; (k = next.fetch_add(16)) < spans.size();) {
        std::vector<FileRange> group;
        for (size_t j = k; j < std::min(spans.size(), k + 16); ++j)
          group.push_back({&file, spans[j].first, spans[j].second});
        auto got = read_ranges(group, pool_);
        for (size_t j = 0; j < group.size(); ++j)
          if (std::memcmp(got[j].data, bytes_.data() + group[j].offset, got[j].size) != 0) ++bad;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(DataFileTest, ViewsOutliveTheFile) {
  FileBytes view;
  {
    DataFile file(path_, {IoMode::kMmap, false});
    view = file.read(1000, 5000, pool_);
  }
  EXPECT_EQ(std::memcmp(view.data, bytes_.data() + 1000, 5000), 0);
  auto whole = read_whole_file(path_, {IoMode::kMmap, false}, pool_);
  ASSERT_EQ(whole.size, bytes_.size());
  EXPECT_EQ(std::memcmp(whole.data, bytes_.data(), bytes_.size()), 0);
  auto copy = read_whole_file(path_, {IoMode::kPread, false}, pool_);
  ASSERT_EQ(copy.size, bytes_.size());
  EXPECT_EQ(std::memcmp(copy.data, bytes_.data(), bytes_.size()), 0);
}

TEST_F(DataFileTest, InMemoryFiles) {
  DataFile file("inflated.tgz", std::vector<uint8_t>(bytes_.begin(), bytes_.begin() + 100));
  EXPECT_TRUE(file.in_memory());
  auto got = file.read(10, 20, pool_);
  EXPECT_EQ(std::memcmp(got.data, bytes_.data() + 10, 20), 0);
}

TEST_F(DataFileTest, ErrorsNameTheFileAndTheRange) {
  try {
    DataFile missing((dir_ / "nope.bin").string(), FileOptions{});
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nope.bin"), std::string::npos) << e.what();
  }
  for (IoMode mode : {IoMode::kMmap, IoMode::kPread}) {
    DataFile file(path_, {mode, false});
    try {
      file.read(int64_t(bytes_.size()) - 4, 8, pool_);
      FAIL() << "expected IOError";
    } catch (const IOError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("cannot read 8 bytes at offset " + std::to_string(bytes_.size() - 4)),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("blob.bin"), std::string::npos) << m;
    }
  }
  // A file that shrinks after it was opened: pread reports where it ended.
  DataFile file(path_, {IoMode::kPread, false});
  fs::resize_file(path_, 1000);
  try {
    file.read(500, 1000, pool_);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("ended at 1000"), std::string::npos) << e.what();
  }
}

// --- Prefetcher -----------------------------------------------------------------------------

TEST(Prefetcher, DeliversInDrawOrderWhateverOrderLoadsFinish) {
  int64_t drawn = 0;
  std::atomic<int> in_flight{0}, max_in_flight{0};
  std::atomic<int> bad_groups{0};
  Prefetcher p(
      4, 12, 2, [&] { return drawn++; },
      [&](std::span<LoadedSample> group) {
        EXPECT_EQ(group.size(), 2u);
        EXPECT_EQ(group[1].index, group[0].index + 1);  // consecutive draws
        struct Leave {
          std::atomic<int>& n;
          ~Leave() { --n; }
        } leave{in_flight};
        int now = ++in_flight;
        int prev = max_in_flight.load();
        while (now > prev && !max_in_flight.compare_exchange_weak(prev, now)) {
        }
        // Later samples finish first: sleep less for higher indices.
        std::this_thread::sleep_for(std::chrono::microseconds(200 * (7 - group[0].index % 7)));
        for (auto& s : group) {
          s.source_info = std::to_string(s.index);
          if (s.index % 5 == 3)
            s.error = std::make_exception_ptr(ValueError("bad sample " + std::to_string(s.index)));
        }
        // A group whose load throws: the error lands on every sample without one.
        if (group[0].index % 20 == 10) throw IOError("group failed");
      });
  for (int64_t k = 0; k < 60; ++k) {
    auto s = p.pop();
    ASSERT_EQ(s.index, k);
    EXPECT_EQ(s.source_info, std::to_string(k));
    if (k % 20 == 10 || k % 20 == 11) {
      ASSERT_TRUE(s.error);
      EXPECT_THROW(std::rethrow_exception(s.error), IOError);
    } else if (k % 5 == 3) {
      ASSERT_TRUE(s.error);
      try {
        std::rethrow_exception(s.error);
      } catch (const ValueError& e) {
        EXPECT_EQ(std::string(e.what()), "bad sample " + std::to_string(k));
      }
    } else {
      EXPECT_FALSE(s.error);
    }
  }
  EXPECT_LE(max_in_flight.load(), 4);
  EXPECT_LE(drawn, 60 + 12);  // never more than `depth` ahead of what was popped
}

TEST(Prefetcher, StopsWhileLoadsAreInFlight) {
  std::atomic<int> loads{0};
  {
    Prefetcher p(
        3, 8, 1, [n = int64_t(0)]() mutable { return n++; },
        [&](std::span<LoadedSample>) {
          ++loads;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });
    EXPECT_EQ(p.pop().index, 0);
  }  // the destructor joins: no load runs after this point
  int after = loads.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loads.load(), after);
  EXPECT_THROW(Prefetcher(
                   0, 1, 1, [] { return int64_t(0); }, [](std::span<LoadedSample>) {}),
               ValueError);
}

// In a child process whose address space is capped (as under ulimit -v): a Prefetcher of 1000
// threads fails with the error, and no load runs after it returned. Exits 0 when all went so.
[[noreturn]] void refused_prefetcher_child() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  const rlimit cap{pages * size_t(sysconf(_SC_PAGESIZE)) + (size_t(64) << 20), RLIM_INFINITY};
  setrlimit(RLIMIT_AS, &cap);
  std::atomic<int> loads{0};
  try {
    Prefetcher p(
        1000, 64, 1, [n = int64_t(0)]() mutable { return n++; },
        [&](std::span<LoadedSample>) { ++loads; });
    std::exit(2);
  } catch (const RuntimeError& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  const int after = loads.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::exit(loads.load() == after ? 0 : 3);
}

// An I/O thread the system refuses is a RuntimeError naming it, and the threads started before
// it (drawing and loading already) are joined: before, the constructor threw past joinable
// std::threads, which aborts the process.
TEST(PrefetcherDeathTest, ThreadTheSystemRefusesIsAnErrorAndTheStartedOnesAreJoined) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve address space that a cap would refuse";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(refused_prefetcher_child(), ::testing::ExitedWithCode(0),
              "cannot start thread [0-9]+ of 1000 for the reader's I/O threads");
}

}  // namespace
}  // namespace stoker::readers
