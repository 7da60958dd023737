// The files of a reader of one file per sample, found as DALI's FileLoader finds them
// (readers.numpy, experimental.readers.fits).
#pragma once

#include <string>
#include <vector>

#include "stoker/ops/op_spec.hpp"

namespace stoker::ops {

// From the spec's arguments: `files` (relative to `file_root` when given), a `file_list` (one
// name per line, surrounding white space dropped and empty lines skipped, relative to
// `file_root` when given, else to the list's own folder), or every file under `file_root`
// (recursively) whose name matches the glob `file_filter` (case-insensitive), sorted. Throws
// naming the operator when none is given, both `files` and `file_list` are, a list cannot be
// read or names nothing, or the folder holds no matching file.
std::vector<std::string> list_reader_files(const OpSpec& spec);

}  // namespace stoker::ops
