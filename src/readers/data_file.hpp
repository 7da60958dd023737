// DataFile: a container file opened once and read many times, from several threads.
//
// Three ways to get bytes, chosen per reader (`dont_use_mmap`) or by the content:
// - kMmap: a shared read-only mapping; reads return views into it (no copy). The mapping
//   lives as long as any view does. The reading thread touches the pages it returns, so the
//   page faults happen on the readers' I/O threads and not later on the compute threads.
// - kPread: reads copy into pooled buffers with pread. Small reads that continue where the
//   previous one ended are served from one large sequential read (a chunk, kChunkBytes);
//   reads out of order go to the file directly, so shuffled access never reads extra bytes.
// - kMemory: the bytes are held in memory (gzip-compressed containers, inflated at open).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::readers {

struct FileMapping;  // internal: the bytes of a mapped or in-memory file

enum class IoMode { kMmap, kPread };

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
  static constexpr size_t kChunkBytes = size_t(4) << 20;

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
  // past the end or the read fails. Thread-safe. `prefault` false leaves a mapping's pages
  // untouched (for scans that read only headers).
  FileBytes read(int64_t offset, int64_t size, MemoryPool& pool, bool prefault = true) const;
  // The whole file (a view of the mapping / memory, or one read).
  FileBytes read_all(MemoryPool& pool, bool prefault = true) const {
    return read(0, size_, pool, prefault);
  }

 private:
  FileBytes read_direct(int64_t offset, int64_t size, MemoryPool& pool) const;
  void pread_exact(void* out, int64_t offset, int64_t size) const;

  std::string path_;
  int64_t size_ = 0;
  IoMode mode_ = IoMode::kPread;
  std::shared_ptr<int> fd_owner_;         // the descriptor (closed with the last user)
  std::shared_ptr<FileMapping> mapping_;  // kMmap and kMemory: the bytes
  // kPread: the last sequential chunk and where the previous read ended.
  mutable std::mutex chunk_mutex_;
  mutable std::shared_ptr<Buffer> chunk_;
  mutable int64_t chunk_offset_ = 0;
  mutable int64_t chunk_size_ = 0;
  mutable int64_t last_end_ = -1;
};

// Reads a whole file once (open, read, close) the way `options` say: a view of a private
// mapping or a pooled copy. For readers of one file per sample.
FileBytes read_whole_file(const std::string& path, const FileOptions& options, MemoryPool& pool);

}  // namespace stoker::readers
