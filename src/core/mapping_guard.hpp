// Mapped files whose pages can vanish. A file truncated while it is mapped (a dataset rewritten
// under a job, a network file system) makes every access past its new end raise SIGBUS, on
// whatever thread touches the bytes: a reader's I/O thread, a decoder, FFmpeg, the user's numpy
// view of a batch. Reads stay zero-copy views of the mapping; instead, a registered mapping is
// guarded process-wide: the SIGBUS handler maps zero pages over the lost part of it, marks it
// damaged and lets the access go on. Whoever used the bytes asks afterwards (damaged_mapping())
// and raises an error naming the file; mapping_damage_count() keeps that check free while
// nothing was ever damaged. Faults outside guarded mappings go to the handler installed before
// (Python's faulthandler, the default action).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stoker {

class MappingGuard {
 public:
  // Guards [addr, addr + length), the mapping of `path` (open as `fd`, which must outlive the
  // guard: check_size() reads its size). Without a free slot (over kMaxGuarded mappings at
  // once) the mapping is left unguarded, as every mapping was before.
  MappingGuard(const void* addr, size_t length, std::string path, int fd);
  ~MappingGuard();
  MappingGuard(const MappingGuard&) = delete;
  MappingGuard& operator=(const MappingGuard&) = delete;

  const std::string& path() const { return path_; }
  // Whether a fault past the file's end has been repaired with zero pages.
  bool damaged() const;
  // Throws IOError naming the file when it is damaged or now shorter than the mapping, so that
  // its bytes past the end are gone (or will be at the next touch).
  void check_size() const;

  static constexpr int kMaxGuarded = 1 << 16;

 private:
  std::string path_;
  int fd_ = -1;
  size_t length_ = 0;
  int slot_ = -1;
};

// Faults repaired so far in this process (any mapping). Unchanged: nothing to check.
uint64_t mapping_damage_count();

// The guard of a mapping that [p, p + n) overlaps, when that mapping is damaged; else nullptr.
// (The guard lives as long as the mapping, which the caller's view of it keeps alive.)
const MappingGuard* damaged_mapping(const void* p, size_t n);

// The guard of a live mapping that [p, p + n) overlaps, damaged or not; else nullptr.
const MappingGuard* guarded_mapping(const void* p, size_t n);

// Files damaged since the last call (each named once): for a warning that views taken before
// read zeros where the file lost its bytes.
std::vector<std::string> take_new_damage();

}  // namespace stoker
