// Whole-file reads with POSIX calls. Library code avoids iostreams: an extension module built
// with a statically linked libstdc++ (as the GPU machine's compiler does) crashed inside the
// stream locale machinery (docs/dev/style.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

// The file's bytes; throws IOError naming the file and the system's reason.
std::vector<uint8_t> read_file_bytes(const std::string& path);
std::string read_file_text(const std::string& path);

}  // namespace stoker
