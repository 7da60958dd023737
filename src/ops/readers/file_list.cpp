#include "stoker/ops/readers/file_list.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "stoker/core/error.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {
namespace {

std::vector<std::string> read_name_list(const std::string& op, const std::string& list,
                                        const std::string& root) {
  namespace fs = std::filesystem;
  std::ifstream in(list);
  STOKER_ENFORCE(in.good(), IOError, op, ": cannot open file_list '", list, "'");
  const fs::path base = root.empty() ? fs::path(list).parent_path() : fs::path(root);
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    names.push_back((base / line.substr(b, e - b + 1)).string());
  }
  STOKER_ENFORCE(!names.empty(), ValueError, op, ": file_list '", list, "' names no files");
  return names;
}

}  // namespace

std::vector<std::string> list_reader_files(const OpSpec& spec) {
  namespace fs = std::filesystem;
  const std::string& op = spec.schema->name;
  const auto root = spec.arg<std::string>("file_root");
  const auto files = spec.arg<std::vector<std::string>>("files");
  const auto list = spec.arg<std::string>("file_list");
  STOKER_ENFORCE(files.empty() || list.empty(), ValueError, op,
                 ": give `files` or `file_list`, not both");
  if (!list.empty()) return read_name_list(op, list, root);
  std::vector<std::string> out;
  if (!files.empty()) {
    for (auto& f : files)
      out.push_back(root.empty() || fs::path(f).is_absolute() ? f : (fs::path(root) / f).string());
    return out;
  }
  STOKER_ENFORCE(!root.empty(), ValueError, op, ": give `file_root`, `files` or `file_list`");
  std::error_code ec;
  STOKER_ENFORCE(fs::is_directory(root, ec), IOError, "file_root '", root,
                 "' is not a folder (or cannot be read)");
  const auto filter = spec.arg<std::string>("file_filter");
  for (auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() &&
        fnmatch(filter.c_str(), e.path().filename().c_str(), FNM_CASEFOLD) == 0)
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  STOKER_ENFORCE(!out.empty(), ValueError, "file_root '", root, "' holds no files matching '",
                 filter, "'");
  return out;
}

}  // namespace stoker::ops
