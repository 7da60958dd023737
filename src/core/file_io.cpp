#include "stoker/core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stoker/core/error.hpp"

namespace stoker {

int open_regular_file(const std::string& path, int64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  STOKER_ENFORCE(fd >= 0, IOError, "cannot open '", path, "': ", std::strerror(errno));
  struct stat st {};
  const char* kind = nullptr;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw IOError(detail::concat("cannot stat '", path, "': ", std::strerror(e)));
  }
  if (S_ISDIR(st.st_mode)) kind = "a folder";
  else if (S_ISFIFO(st.st_mode)) kind = "a FIFO";
  else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) kind = "a device";
  else if (S_ISSOCK(st.st_mode)) kind = "a socket";
  if (kind != nullptr) {
    ::close(fd);
    throw IOError(detail::concat("'", path, "' is ", kind, ", not a regular file"));
  }
  // Back to blocking reads (O_NONBLOCK only kept open() from waiting).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size = int64_t(st.st_size);
  return fd;
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  int64_t size = 0;
  int fd = open_regular_file(path, size);
  std::vector<uint8_t> data;
  if (size > 0) data.reserve(size_t(size));
  uint8_t chunk[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      ::close(fd);
      throw IOError(detail::concat("cannot read '", path, "': ", std::strerror(e)));
    }
    if (r == 0) break;
    data.insert(data.end(), chunk, chunk + r);
  }
  ::close(fd);
  return data;
}

std::string read_file_text(const std::string& path) {
  auto bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace stoker
