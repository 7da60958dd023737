#include "stoker/readers/data_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "stoker/core/error.hpp"
#include "stoker/core/file_io.hpp"
#include "stoker/core/mapping_guard.hpp"

namespace stoker::readers {

// The bytes of a mapped or in-memory file, with a Buffer (no pool: never returned anywhere)
// that views alias, so a view keeps the whole mapping alive. A mapping keeps its descriptor
// (the guard reads the file's size through it) and is guarded against the file shrinking
// (core/mapping_guard.hpp): a lost page reads as zeros and every user of the bytes can tell.
struct FileMapping {
  void* addr = nullptr;
  size_t length = 0;
  bool mapped = false;
  std::vector<uint8_t> memory;
  Buffer whole;
  std::shared_ptr<int> fd;
  std::optional<MappingGuard> guard;
  FileMapping(void* a, size_t n, std::shared_ptr<int> descriptor, const std::string& path)
      : addr(a),
        length(n),
        mapped(true),
        whole(a, n, MemoryKind::kHost, nullptr, 0),
        fd(std::move(descriptor)) {
    guard.emplace(a, n, path, *fd);
  }
  explicit FileMapping(std::vector<uint8_t> bytes)
      : memory(std::move(bytes)),
        whole(memory.data(), memory.size(), MemoryKind::kHost, nullptr, 0) {
    addr = memory.data();
    length = memory.size();
  }
  ~FileMapping() {
    guard.reset();  // unguarded before the range can be mapped again by someone else
    if (mapped) ::munmap(addr, length);
  }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
};

namespace {

void* map_file(int fd, size_t length, bool populate, const std::string& path) {
  int flags = MAP_PRIVATE | (populate ? MAP_POPULATE : 0);
  void* addr = ::mmap(nullptr, length, PROT_READ, flags, fd, 0);
  STOKER_ENFORCE(addr != MAP_FAILED, IOError, "cannot map '", path, "': ", std::strerror(errno));
  return addr;
}

// Reads exactly `size` bytes at `offset` (retrying short reads and EINTR). Throws IOError
// naming the file, the range and the reason.
void pread_all(int fd, void* out, int64_t offset, int64_t size, const std::string& path) {
  int64_t done = 0;
  while (done < size) {
    ssize_t r =
        ::pread(fd, static_cast<char*>(out) + done, size_t(size - done), off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    STOKER_ENFORCE(r >= 0, IOError, "cannot read ", size, " bytes at offset ", offset, " of '",
                   path, "': ", std::strerror(errno));
    STOKER_ENFORCE(r > 0, IOError, "'", path, "' ended at ", offset + done, " while reading ", size,
                   " bytes at offset ", offset, " (the file shrank?)");
    done += r;
  }
}

std::shared_ptr<int> own_descriptor(int fd) {
  return std::shared_ptr<int>(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
}

// Touches the pages of [p, p + n) of `m`; false when the file lost some of them meanwhile
// (they read as zeros now: the guard repaired the fault).
bool prefault_checked(const FileMapping& m, const uint8_t* p, size_t n) {
  prefault(p, n);
  return !m.guard || !m.guard->damaged();
}

}  // namespace

void prefault(const uint8_t* p, size_t n) {
  constexpr size_t kPage = 4096;
  volatile uint8_t sink = 0;
  for (size_t k = 0; k < n; k += kPage) sink = sink + p[k];
  if (n > 0) sink = sink + p[n - 1];
}

DataFile::DataFile(std::string path, const FileOptions& options)
    : path_(std::move(path)), mode_(options.mode) {
  int fd = open_regular_file(path_, size_);
  fd_owner_ = own_descriptor(fd);
  if (mode_ == IoMode::kMmap && size_ > 0) {
    mapping_ = std::make_shared<FileMapping>(map_file(fd, size_t(size_), options.read_ahead, path_),
                                             size_t(size_), fd_owner_, path_);
    ::madvise(mapping_->addr, mapping_->length, MADV_SEQUENTIAL);
  } else if (options.read_ahead) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
  }
}

DataFile::DataFile(std::string path, std::vector<uint8_t> bytes)
    : path_(std::move(path)),
      size_(int64_t(bytes.size())),
      mapping_(std::make_shared<FileMapping>(std::move(bytes))) {}

DataFile::~DataFile() = default;

void DataFile::pread_exact(void* out, int64_t offset, int64_t size) const {
  pread_all(*fd_owner_, out, offset, size, path_);
}

FileBytes DataFile::read(int64_t offset, int64_t size, MemoryPool& pool, bool touch) const {
  STOKER_ENFORCE(offset >= 0 && size >= 0 && offset <= size_ && size <= size_ - offset, IOError,
                 "cannot read ", size, " bytes at offset ", offset, " of '", path_,
                 "': the file has ", size_, " bytes");
  if (mapping_) {
    const auto* p = static_cast<const uint8_t*>(mapping_->addr) + offset;
    if (mode_ == IoMode::kMmap && touch) {
      // Past a file's current end the mapping has no pages: check, then touch (a file that
      // shrinks in between faults; the guard turns that into zeros, seen here).
      struct stat st {};
      STOKER_ENFORCE(::fstat(*fd_owner_, &st) == 0, IOError, "cannot stat '", path_,
                     "': ", std::strerror(errno));
      STOKER_ENFORCE(offset + size <= int64_t(st.st_size), IOError, "'", path_, "' shrank to ",
                     int64_t(st.st_size), " bytes since it was opened (", size_, "): cannot read ",
                     size, " bytes at offset ", offset);
      STOKER_ENFORCE(prefault_checked(*mapping_, p, size_t(size)), IOError, "'", path_,
                     "' shrank while ", size, " bytes at offset ", offset,
                     " were read from its mapping");
    }
    return {std::shared_ptr<Buffer>(mapping_, &mapping_->whole), p, size_t(size)};
  }
  auto buf = pool.acquire(size_t(size));
  if (size > 0) pread_exact(buf->data(), offset, size);
  const auto* p = static_cast<const uint8_t*>(buf->data());
  return {std::move(buf), p, size_t(size)};
}

std::vector<FileBytes> read_ranges(std::span<const FileRange> ranges, MemoryPool& pool) {
  std::vector<size_t> order(ranges.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto &x = ranges[a], &y = ranges[b];
    return x.file != y.file ? std::less<>()(x.file, y.file) : x.offset < y.offset;
  });
  std::vector<FileBytes> out(ranges.size());
  size_t k = 0;
  while (k < order.size()) {
    // One run: ranges of the same file, each starting at most kCoalesceGap past the run's end.
    const FileRange& first = ranges[order[k]];
    int64_t begin = first.offset, end = first.offset + first.size;
    size_t j = k + 1;
    for (; j < order.size(); ++j) {
      const FileRange& r = ranges[order[j]];
      const int64_t new_end = std::max(end, r.offset + r.size);
      if (r.file != first.file || r.offset > end + kCoalesceGap || new_end - begin > kCoalesceMax)
        break;
      end = new_end;
    }
    auto run = first.file->read(begin, end - begin, pool);
    for (size_t m = k; m < j; ++m) {
      const FileRange& r = ranges[order[m]];
      out[order[m]] = {run.owner, run.data + (r.offset - begin), size_t(r.size)};
    }
    k = j;
  }
  return out;
}

FileBytes read_whole_file(const std::string& path, const FileOptions& options, MemoryPool& pool) {
  int64_t size = 0;
  auto fd = own_descriptor(open_regular_file(path, size));  // a mapping keeps it; else closed here
  if (size == 0) return {pool.acquire(0), nullptr, 0};
  if (options.mode == IoMode::kMmap && size >= kSmallFileBytes) {
    auto m = std::make_shared<FileMapping>(map_file(*fd, size_t(size), options.read_ahead, path),
                                           size_t(size), fd, path);
    const auto* p = static_cast<const uint8_t*>(m->addr);
    STOKER_ENFORCE(prefault_checked(*m, p, size_t(size)), IOError, "'", path,
                   "' shrank while it was read from its mapping");
    return {std::shared_ptr<Buffer>(m, &m->whole), p, size_t(size)};
  }
  if (options.mode == IoMode::kDirect) {
    const size_t padded = (size_t(size) + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    auto buf = pool.acquire(padded + kDirectAlign);
    auto* p =
        reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buf->data()) + kDirectAlign - 1) &
                                   ~uintptr_t(kDirectAlign - 1));
    if (!read_direct(path, p, size_t(size))) pread_all(*fd, p, 0, size, path);
    return {std::move(buf), p, size_t(size)};
  }
  auto buf = pool.acquire(size_t(size));
  pread_all(*fd, buf->data(), 0, size, path);
  const auto* p = static_cast<const uint8_t*>(buf->data());
  return {std::move(buf), p, size_t(size)};
}

bool read_direct(const std::string& path, uint8_t* out, size_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return false;
  const auto closer = own_descriptor(fd);
  const size_t padded = (size + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  size_t done = 0;
  while (done < size) {
    const ssize_t r = ::pread(fd, out + done, padded - done, off_t(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EINVAL && done == 0) return false;
    STOKER_ENFORCE(r >= 0, IOError, "cannot read '", path, "' (O_DIRECT): ", std::strerror(errno));
    STOKER_ENFORCE(r > 0, IOError, "'", path, "' ended after ", done, " of ", size,
                   " bytes (it changed while being read)");
    done += size_t(r);
  }
  return true;
}

}  // namespace stoker::readers
