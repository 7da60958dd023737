#include "stoker/core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stoker/core/error.hpp"

namespace stoker {

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  STOKER_ENFORCE(fd >= 0, IOError, "cannot open '", path, "': ", std::strerror(errno));
  std::vector<uint8_t> data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) data.reserve(size_t(st.st_size));
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
