#include "stoker/readers/sequence_index.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>

#include "stoker/core/error.hpp"
#include "stoker/readers/file_index.hpp"

namespace stoker::readers {
namespace fs = std::filesystem;

namespace {
bool is_image_name(const std::string& name) {
  for (const auto& f : default_image_filters()) {
    if (fnmatch(f.c_str(), name.c_str(), FNM_CASEFOLD) == 0) return true;
  }
  return false;
}

// glob's '*' skips names that start with '.' (hidden files, "." and "..").
bool hidden(const fs::path& p) { return p.filename().string().starts_with('.'); }
}  // namespace

std::vector<FrameStream> index_frame_streams(const std::string& root) {
  std::error_code ec;
  STOKER_ENFORCE(fs::is_directory(root, ec), IOError, "file_root '", root,
                 "' is not a folder (or cannot be read)");
  // Paths are spelled as glob spells them (root + '/' + sub + '/' + name), so that sorting
  // them gives DALI's order even where file_root ends with '/'.
  std::vector<std::string> paths;
  for (const auto& sub : fs::directory_iterator(root, ec)) {
    if (hidden(sub.path()) || !sub.is_directory(ec)) continue;
    const std::string folder = root + "/" + sub.path().filename().string();
    for (const auto& f : fs::directory_iterator(sub.path(), ec)) {
      const auto name = f.path().filename().string();
      // Not a folder (a dangling link is kept: reading it fails, naming it, as in DALI).
      if (hidden(f.path()) || f.is_directory(ec) || !is_image_name(name)) continue;
      paths.push_back(folder + "/" + name);
    }
  }
  STOKER_ENFORCE(!paths.empty(), ValueError, "file_root '", root,
                 "' holds no frames: expected image files in its sub-folders ('", root,
                 "/*/*', a folder per stream)");
  std::sort(paths.begin(), paths.end());
  std::vector<FrameStream> streams;
  for (auto& p : paths) {
    // The paths of one folder are contiguous once sorted: they share the prefix folder + '/'.
    auto folder = p.substr(0, p.rfind('/'));
    if (streams.empty() || streams.back().folder != folder) streams.push_back({folder, {}});
    streams.back().frames.push_back(std::move(p));
  }
  return streams;
}

}  // namespace stoker::readers
