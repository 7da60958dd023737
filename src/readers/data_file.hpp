// DataFile: a container file opened once and read many times, from several threads.
//
// Three ways to get bytes, chosen per reader (`dont_use_mmap`) or by the content:
// - kMmap: a shared read-only mapping; reads return views into it (no copy). The mapping
//   lives as long as any view does. The reading thread touches the pages it returns, so the
//   page faults happen on the readers' I/O threads and not later on the compute threads.
// - kPread: reads copy into pooled buffers with pread.
// - kDirect: as kPread, through O_DIRECT (the page cache bypassed, DALI's `use_o_direct`) where
//   the file system allows it; read_whole_file() only.
// - in memory: the bytes are held in memory (gzip-compressed containers, inflated at open).
// read_ranges() fetches the ranges of many samples at once: ranges of a file that follow one
// another closely are read with one large sequential read, so reading consecutive records
// costs few system calls, while shuffled access never reads bytes nobody asked for.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::readers {

struct FileMapping;  // internal: the bytes of a mapped or in-memory file

enum class IoMode { kMmap, kPread, kDirect };

struct FileOptions {
  IoMode mode = IoMode::kMmap;
  // Ask the kernel to read the whole file ahead at open (mapping populated, or
  // POSIX_FADV_WILLNEED): slower open, no waiting on the disk afterwards.
  bool read_ahead = false;
};

// Bytes of a file: `data` stays valid while `owner` lives.
struct FileBytes {
  std::shared_ptr<Buffer> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::span<const uint8_t> span() const { return {data, size}; }
};

class DataFile {
 public:
  // Opens `path`; throws IOError naming it and the system's reason.
  DataFile(std::string path, const FileOptions& options);
  // A file whose bytes are already in memory (e.g. an inflated .tgz); `path` names it.
  DataFile(std::string path, std::vector<uint8_t> bytes);
  ~DataFile();
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return size_; }
  bool in_memory() const { return !fd_owner_; }

  // Bytes [offset, offset + size). Throws IOError naming the file and the range when it runs
  // past the end or the read fails. Thread-safe. `touch` false leaves a mapping's pages
  // untouched (for scans that read only headers).
  FileBytes read(int64_t offset, int64_t size, MemoryPool& pool, bool touch = true) const;
  // The whole file (a view of the mapping / memory, or one read).
  FileBytes read_all(MemoryPool& pool, bool touch = true) const {
    return read(0, size_, pool, touch);
  }

 private:
  void pread_exact(void* out, int64_t offset, int64_t size) const;

  std::string path_;
  int64_t size_ = 0;
  IoMode mode_ = IoMode::kPread;
  std::shared_ptr<int> fd_owner_;         // the descriptor (closed with the last user)
  std::shared_ptr<FileMapping> mapping_;  // kMmap and in memory: the bytes
};

// Touches one byte per page of [p, p + n), so that a mapping's page faults happen on the
// calling (I/O) thread rather than later where the bytes are used.
void prefault(const uint8_t* p, size_t n);

struct FileRange {
  const DataFile* file = nullptr;
  int64_t offset = 0;
  int64_t size = 0;
};

// The bytes of every range, in the order given. Ranges of one file that overlap or follow one
// another with gaps of at most kCoalesceGap bytes are fetched with one read of at most
// kCoalesceMax bytes; the results view that read. Throws like DataFile::read.
inline constexpr int64_t kCoalesceGap = int64_t(64) << 10;
inline constexpr int64_t kCoalesceMax = int64_t(16) << 20;
std::vector<FileBytes> read_ranges(std::span<const FileRange> ranges, MemoryPool& pool);

// Reads a whole file once (open, read, close) the way `options` say: a view of a private
// mapping or a pooled copy. For readers of one file per sample. Files under
// kSmallFileBytes are always read: mapping and unmapping one costs more than copying it
// (readers.file measured 64k files/s with pread, 45k with mmap, on 16 cores).
inline constexpr int64_t kSmallFileBytes = int64_t(1) << 20;
FileBytes read_whole_file(const std::string& path, const FileOptions& options, MemoryPool& pool);

// O_DIRECT wants buffer, offset and length aligned to the device's logical block; 4 KiB covers
// the block sizes in use.
inline constexpr size_t kDirectAlign = 4096;
// Reads the first `size` bytes of `path` through an O_DIRECT descriptor into `out`, aligned to
// kDirectAlign with room for `size` rounded up to it. Returns false when the file system
// refuses O_DIRECT (tmpfs, some overlays): the caller reads normally then — the flag is a cache
// hint, not a different result. Throws IOError naming the file when a read fails.
bool read_direct(const std::string& path, uint8_t* out, size_t size);

}  // namespace stoker::readers
