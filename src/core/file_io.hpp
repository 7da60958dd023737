// Whole-file reads with POSIX calls. Library code avoids iostreams: an extension module built
// with a statically linked libstdc++ (as the GPU machine's compiler does) crashed inside the
// stream locale machinery (docs/dev/style.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

// Opens a regular file for reading (O_CLOEXEC) and gives its size. A FIFO, device, socket or
// folder at `path` is an IOError naming it, found without blocking (a FIFO's open waits for a
// writer; a device may never end), as is a file that cannot be opened (the system's reason).
int open_regular_file(const std::string& path, int64_t& size);

// The file's bytes; throws IOError naming the file and the system's reason.
std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string read_file_text(const std::string& path);

}  // namespace stoker
