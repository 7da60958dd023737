// MXNet RecordIO (.rec) framing and image records (IRHeader), and the .idx index
// ("key\toffset" per line).
//
// A record is a sequence of parts, each: uint32 magic 0xced7230a | uint32 lrecord (upper 3
// bits: cflag 0 whole, 1 first, 2 middle, 3 last; lower 29 bits: length) | data padded to a
// multiple of 4. MXNet splits a record where its data contains the magic number; joining the
// parts re-inserts the magic between them. An image record's data starts with the IRHeader
// {uint32 flag; float label; uint64 id; uint64 id2}; when flag > 0, `flag` float labels follow
// and replace `label`; the encoded image comes next.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::readers {

inline constexpr uint32_t kRecordIOMagic = 0xced7230a;

struct RecordIOEntry {
  int64_t offset = 0;  // of the record's first part
  int64_t size = 0;    // bytes of all its parts (headers and padding included)
};

// Walks the records of a .rec file held in memory; errors name `path` and the offset
// (bad magic, truncation, a continuation without a start, an unknown flag).
std::vector<RecordIOEntry> index_recordio(std::span<const uint8_t> file, const std::string& path);

// The joined data of the record at `e`.
std::vector<uint8_t> read_recordio_record(std::span<const uint8_t> file, const RecordIOEntry& e,
                                          const std::string& path);

// The same as a view: into `file` when the record is one part (the usual case, no copy),
// else into `joined`, which receives the joined parts.
std::span<const uint8_t> recordio_record_view(std::span<const uint8_t> file, const RecordIOEntry& e,
                                              const std::string& path,
                                              std::vector<uint8_t>& joined);

struct ImageRecord {
  std::vector<float> labels;  // one, or `flag` of them
  uint64_t id = 0, id2 = 0;
  std::span<const uint8_t> image;  // view into the record data
};
ImageRecord parse_image_record(std::span<const uint8_t> record, const std::string& where);

// MXNet .idx: "key\toffset" lines (any order). Returns offsets sorted by offset; the sizes are
// the gaps between them (the last runs to `file_size`).
std::vector<RecordIOEntry> parse_recordio_index(std::string_view text, const std::string& path,
                                                int64_t file_size);
// An .idx for `records` with keys 0, 1, ... in file order (as MXNet's im2rec writes them).
std::string format_recordio_index(const std::vector<RecordIOEntry>& records);

}  // namespace stoker::readers
