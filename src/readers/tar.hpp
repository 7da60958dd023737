// Tar archives (POSIX ustar, GNU long names, pax extended headers) as used by webdataset, and
// webdataset's grouping of members into samples: a member "dir/key.ext1.ext2" belongs to
// sample "dir/key" under the extension "ext1.ext2" (split at the first dot of the basename).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
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

// DALI's webdataset index (wds2idx): a header "v1.1 <samples>" or "v1.2 <samples>", then one
// line per sample of "<ext> <data offset> <size>" groups (v1.1) or
// "<ext> <data offset> <size> <member path>" groups (v1.2). Returns the members in order; v1.1
// has no names, so its members are named "<sample number>.<ext>". Errors (ValueError) name the
// index file and line; spans must lie within `file_size` (when >= 0).
std::vector<TarMember> parse_wds_index(std::string_view text, const std::string& path,
                                       int64_t file_size = -1);
// The v1.2 index of an archive's members (grouped into samples as webdataset does).
std::string format_wds_index(const std::vector<TarMember>& members);

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
