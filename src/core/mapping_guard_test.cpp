#include "stoker/core/mapping_guard.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "stoker/core/error.hpp"

namespace stoker {
namespace {

// A file of `pages` pages of 0x5a, mapped; truncated by the test.
struct MappedFile {
  std::string path;
  int fd = -1;
  size_t length = 0;
  const uint8_t* data = nullptr;
  explicit MappedFile(size_t pages) {
    char name[] = "/tmp/stoker_guard_XXXXXX";
    fd = ::mkstemp(name);
    path = name;
    length = pages * size_t(::sysconf(_SC_PAGESIZE));
    std::vector<uint8_t> bytes(length, 0x5a);
    EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    data = static_cast<const uint8_t*>(::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0));
  }
  ~MappedFile() {
    ::munmap(const_cast<uint8_t*>(data), length);
    ::close(fd);
    ::unlink(path.c_str());
  }
  // Reads every byte the way a decoder would (volatile: the compiler keeps each load).
  unsigned sum() const {
    unsigned s = 0;
    const volatile uint8_t* p = data;
    for (size_t k = 0; k < length; ++k) s += p[k];
    return s;
  }
};

TEST(MappingGuard, AFileThatShrinksReadsZerosAndNamesItselfInsteadOfABusError) {
  MappedFile f(4);
  MappingGuard guard(f.data, f.length, f.path, f.fd);
  EXPECT_FALSE(guard.damaged());
  EXPECT_NO_THROW(guard.check_size());
  EXPECT_EQ(guarded_mapping(f.data + 10, 5), &guard);
  EXPECT_EQ(damaged_mapping(f.data, f.length), nullptr);
  const uint64_t before = mapping_damage_count();

  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  ASSERT_EQ(::ftruncate(f.fd, off_t(page)), 0);  // the last three pages are gone
  try {
    guard.check_size();
    FAIL() << "no error for a shrunk file";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + f.path + "' shrank to " + std::to_string(page) +
                                         " bytes since it was mapped"),
              std::string::npos)
        << e.what();
  }
  // Without the guard this read dies of SIGBUS; with it the lost pages read as zeros.
  EXPECT_EQ(f.sum(), 0x5au * unsigned(page));
  EXPECT_TRUE(guard.damaged());
  EXPECT_GT(mapping_damage_count(), before);
  EXPECT_EQ(damaged_mapping(f.data + 2 * page, 1), &guard);
  EXPECT_EQ(damaged_mapping(f.data, 1), &guard);  // the mapping, not only the lost part
  const auto damaged = take_new_damage();
  ASSERT_EQ(damaged.size(), 1u);
  EXPECT_EQ(damaged[0], f.path);
  EXPECT_TRUE(take_new_damage().empty());  // named once
  EXPECT_THROW(guard.check_size(), IOError);
}

TEST(MappingGuard, GuardsGoAwayWithTheirMappingAndLeaveOthersAlone) {
  MappedFile a(2), b(2);
  {
    MappingGuard ga(a.data, a.length, a.path, a.fd);
    EXPECT_EQ(guarded_mapping(a.data, 1), &ga);
  }
  EXPECT_EQ(guarded_mapping(a.data, 1), nullptr);
  MappingGuard gb(b.data, b.length, b.path, b.fd);
  EXPECT_EQ(guarded_mapping(a.data, a.length), nullptr);
  EXPECT_EQ(guarded_mapping(b.data + b.length - 1, 1), &gb);
  EXPECT_EQ(guarded_mapping(b.data + b.length, 1), nullptr);  // one past the end
}

// The fault goes to the handler installed before: the default action (killed by SIGBUS), or a
// sanitizer's report (AddressSanitizer exits with "BUS on unknown address").
TEST(MappingGuardDeathTest, FaultsOutsideGuardedMappingsKeepTheirSignal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        MappedFile guarded(1);
        MappingGuard guard(guarded.data, guarded.length, guarded.path, guarded.fd);
        MappedFile other(2);  // not guarded: a bus error there is the process's as before
        (void)::ftruncate(other.fd, 0);
        (void)other.sum();  // volatile reads: the bus error happens here
        std::exit(0);       // reaching this is the failure
      },
      "");
}

}  // namespace
}  // namespace stoker
