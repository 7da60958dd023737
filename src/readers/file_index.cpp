#include "stoker/readers/file_index.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>

#include "stoker/core/error.hpp"
#include "stoker/core/file_io.hpp"

namespace stoker::readers {
namespace fs = std::filesystem;

const std::vector<std::string>& default_image_filters() {
  static const std::vector<std::string> kFilters{"*.jpg", "*.jpeg", "*.png", "*.bmp",
                                                 "*.tif", "*.tiff", "*.pnm", "*.ppm",
                                                 "*.pgm", "*.pbm",  "*.jp2", "*.webp"};
  return kFilters;
}

namespace {
bool matches(const std::string& name, const std::vector<std::string>& filters) {
  for (auto& f : filters) {
    if (fnmatch(f.c_str(), name.c_str(), FNM_CASEFOLD) == 0) return true;
  }
  return false;
}

std::string join(const std::string& root, const std::string& p) {
  if (root.empty() || fs::path(p).is_absolute()) return p;
  return (fs::path(root) / p).string();
}
}  // namespace

std::vector<FileEntry> index_class_folders(const std::string& root,
                                           const std::vector<std::string>& filters) {
  std::error_code ec;
  STOKER_ENFORCE(fs::is_directory(root, ec), IOError, "file_root '", root,
                 "' is not a folder (or cannot be read)");
  std::vector<std::string> classes;
  for (auto& e : fs::directory_iterator(root)) {
    if (e.is_directory()) classes.push_back(e.path().filename().string());
  }
  std::sort(classes.begin(), classes.end());
  std::vector<FileEntry> out;
  for (size_t label = 0; label < classes.size(); ++label) {
    std::vector<std::string> files;
    auto dir = fs::path(root) / classes[label];
    for (auto& e :
         fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink)) {
      if (e.is_regular_file() && matches(e.path().filename().string(), filters))
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    for (auto& f : files) out.push_back({f, int32_t(label)});
  }
  STOKER_ENFORCE(!out.empty(), ValueError, "file_root '", root,
                 "' holds no files matching the filters in its class sub-folders (found ",
                 classes.size(), " sub-folders)");
  return out;
}

std::vector<FileEntry> index_file_list(const std::string& list_path, const std::string& root) {
  std::string text;
  try {
    text = read_file_text(list_path);
  } catch (const IOError& e) {
    throw IOError(std::string("cannot open file_list: ") + e.what());
  }
  std::string base = root.empty() ? fs::path(list_path).parent_path().string() : root;
  std::vector<FileEntry> out;
  size_t pos = 0;
  for (int lineno = 1; pos < text.size(); ++lineno) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    // The label is the last field, so paths may contain spaces.
    auto end = line.find_last_not_of(" \t\r");
    auto sep = line.find_last_of(" \t", end);
    STOKER_ENFORCE(sep != std::string::npos && sep > first, ValueError, "file_list '", list_path,
                   "' line ", lineno, ": expected '<path> <label>', got '", line, "'");
    std::string label_text = line.substr(sep + 1, end - sep);
    std::string path = line.substr(first, line.find_last_not_of(" \t", sep) - first + 1);
    size_t used = 0;
    long long label = 0;
    try {
      label = std::stoll(label_text, &used);
    } catch (...) {
      used = 0;
    }
    STOKER_ENFORCE(used == label_text.size(), ValueError, "file_list '", list_path, "' line ",
                   lineno, ": label '", label_text, "' is not an integer");
    out.push_back({join(base, path), int32_t(label)});
  }
  STOKER_ENFORCE(!out.empty(), ValueError, "file_list '", list_path, "' lists no files");
  return out;
}

std::vector<FileEntry> index_files(const std::vector<std::string>& files,
                                   const std::vector<int64_t>& labels, const std::string& root) {
  STOKER_ENFORCE(!files.empty(), ValueError, "`files` is empty");
  STOKER_ENFORCE(labels.empty() || labels.size() == files.size(), ValueError, "got ", files.size(),
                 " files but ", labels.size(), " labels");
  std::vector<FileEntry> out;
  for (size_t i = 0; i < files.size(); ++i)
    out.push_back({join(root, files[i]), int32_t(labels.empty() ? int64_t(i) : labels[i])});
  return out;
}

}  // namespace stoker::readers
