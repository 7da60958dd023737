// Dataset indexes for readers.file: a folder of class sub-folders, a file list, or explicit
// files and labels. Orders are sorted and deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::readers {

struct FileEntry {
  std::string path;
  int32_t label = 0;
};

// DALI's default extension filters (matched case-insensitively).
const std::vector<std::string>& default_image_filters();

// Every file under root/<class>/ (recursively) whose name matches one of `filters` (glob
// patterns, case-insensitive). Classes are the sorted sub-folder names, labelled 0, 1, ...;
// files are sorted by path within a class. Throws IOError if root is not a folder, ValueError
// if no file matches.
std::vector<FileEntry> index_class_folders(const std::string& root,
                                           const std::vector<std::string>& filters);

// A text file of "<path> <label>" lines (blank lines and '#' comments skipped); paths are
// relative to `root` when given, else to the list's folder. Throws ValueError naming the line.
std::vector<FileEntry> index_file_list(const std::string& list_path, const std::string& root);

// Explicit files; labels one per file, or empty (then each file's position, as in DALI). Paths
// relative to `root` if given.
std::vector<FileEntry> index_files(const std::vector<std::string>& files,
                                   const std::vector<int64_t>& labels, const std::string& root);

}  // namespace stoker::readers
