#include "stoker/readers/data_file.hpp"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "stoker/core/error.hpp"

namespace stoker::readers {

// The bytes of a mapped or in-memory file, with a Buffer (no pool: never returned anywhere)
// that views alias, so a view keeps the whole mapping alive.
struct FileMapping {
  void* addr = nullptr;
  size_t length = 0;
  bool mapped = false;
  std::vector<uint8_t> memory;
  Buffer whole;
  FileMapping(void* a, size_t n, bool is_mapped)
      : addr(a), length(n), mapped(is_mapped), whole(a, n, MemoryKind::kHost, nullptr, 0) {}
  explicit FileMapping(std::vector<uint8_t> bytes)
      : memory(std::move(bytes)),
        whole(memory.data(), memory.size(), MemoryKind::kHost, nullptr, 0) {
    addr = memory.data();
    length = memory.size();
  }
  ~FileMapping() {
    if (mapped) ::munmap(addr, length);
  }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
};

namespace {

int open_file(const std::string& path, int64_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  STOKER_ENFORCE(fd >= 0, IOError, "cannot open '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw IOError(detail::concat("cannot stat '", path, "': ", std::strerror(e)));
  }
  size = int64_t(st.st_size);
  return fd;
}

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

// A mapped file that shrinks after it was mapped (a dataset rewritten, a network filesystem)
// raises SIGBUS on access to the pages past its new end. The I/O threads touch a range's pages
// under this guard: a bus error there jumps back and becomes an IOError naming the file.
// Faults anywhere else go to the handler that was installed before (Python's faulthandler,
// the default action).
thread_local sigjmp_buf* t_guard = nullptr;
struct sigaction g_previous {};

void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (t_guard != nullptr) siglongjmp(*t_guard, 1);
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    ::sigaction(SIGBUS, &g_previous, nullptr);  // the fault repeats with the default action
  }
}

// Installs on_sigbus unless it is the current handler (another library may have replaced it).
void ensure_sigbus_handler() {
  const auto installed = [] {
    struct sigaction current {};
    ::sigaction(SIGBUS, nullptr, &current);
    return (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigbus;
  };
  if (installed()) return;  // the usual case: no lock on the I/O threads' path
  static std::mutex m;
  std::lock_guard lock(m);
  if (installed()) return;
  struct sigaction current {};
  ::sigaction(SIGBUS, nullptr, &current);
  struct sigaction ours {};
  ours.sa_sigaction = on_sigbus;
  ours.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&ours.sa_mask);
  g_previous = current;
  ::sigaction(SIGBUS, &ours, nullptr);
}

// prefault() under the guard; false when the pages are gone (SIGBUS).
bool prefault_guarded(const uint8_t* p, size_t n) {
  ensure_sigbus_handler();
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) != 0) {
    t_guard = nullptr;
    return false;
  }
  t_guard = &jump;
  prefault(p, n);
  t_guard = nullptr;
  return true;
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
  int fd = open_file(path_, size_);
  fd_owner_ = std::shared_ptr<int>(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
  if (mode_ == IoMode::kMmap && size_ > 0) {
    mapping_ = std::make_shared<FileMapping>(map_file(fd, size_t(size_), options.read_ahead, path_),
                                             size_t(size_), true);
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
      // Past a file's current end the mapping has no pages (SIGBUS): check, then touch under
      // a guard for a file that shrinks in between.
      struct stat st {};
      STOKER_ENFORCE(::fstat(*fd_owner_, &st) == 0, IOError, "cannot stat '", path_,
                     "': ", std::strerror(errno));
      STOKER_ENFORCE(offset + size <= int64_t(st.st_size), IOError, "'", path_, "' shrank to ",
                     int64_t(st.st_size), " bytes since it was opened (", size_, "): cannot read ",
                     size, " bytes at offset ", offset);
      STOKER_ENFORCE(prefault_guarded(p, size_t(size)), IOError, "'", path_, "' shrank while ",
                     size, " bytes at offset ", offset, " were read from its mapping (bus error)");
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
  int fd = open_file(path, size);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (size == 0) return {pool.acquire(0), nullptr, 0};
  if (options.mode == IoMode::kMmap && size >= kSmallFileBytes) {
    auto m = std::make_shared<FileMapping>(map_file(fd, size_t(size), options.read_ahead, path),
                                           size_t(size), true);
    const auto* p = static_cast<const uint8_t*>(m->addr);
    STOKER_ENFORCE(prefault_guarded(p, size_t(size)), IOError, "'", path,
                   "' shrank while it was read from its mapping (bus error)");
    return {std::shared_ptr<Buffer>(m, &m->whole), p, size_t(size)};
  }
  auto buf = pool.acquire(size_t(size));
  pread_all(fd, buf->data(), 0, size, path);
  const auto* p = static_cast<const uint8_t*>(buf->data());
  return {std::move(buf), p, size_t(size)};
}

}  // namespace stoker::readers
