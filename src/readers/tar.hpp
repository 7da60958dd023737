// Tar archives (POSIX ustar, GNU long names, pax extended headers) as used by webdataset, and
// webdataset's grouping of members into samples: a member "dir/key.ext1.ext2" belongs to
// sample "dir/key" under the extension "ext1.ext2" (split at the first dot of the basename).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stoker::readers {

struct TarMember {
  std::string name;
  int64_t data_offset = 0;  // of the member's content in the archive
  int64_t size = 0;
};

// The regular-file members of an archive held in memory, in order. Errors name `path` and the
// header's offset: bad checksums, truncation, sizes past the end, malformed pax records.
std::vector<TarMember> index_tar(std::span<const uint8_t> archive, const std::string& path);

struct WdsSample {
  std::string key;
  std::vector<int> members;  // per extension group: index into the member list, or -1
};

// Groups members into samples. `ext_groups` holds one entry per output, each a ';'-separated
// list of extensions ("jpg;jpeg"); the first member matching an entry fills it. Samples keep
// the order of their first member. `missing`: "empty" (missing components are empty),
// "skip" (drop incomplete samples) or "error" (ValueError naming the sample and extension).
std::vector<WdsSample> group_webdataset(const std::vector<TarMember>& members,
                                        const std::vector<std::string>& ext_groups,
                                        const std::string& missing, const std::string& path);

}  // namespace stoker::readers
