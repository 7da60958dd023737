// TFRecord framing (TensorFlow's documented format): each record is
//   uint64 length | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)
// little-endian, masked_crc = ((crc >> 15) | (crc << 17)) + 0xa282ead8. Also DALI's
// tfrecord2idx index files ("offset size" per line) and gzip-compressed streams.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::readers {

uint32_t crc32c(const uint8_t* data, size_t size, uint32_t crc = 0);
uint32_t masked_crc32c(const uint8_t* data, size_t size);

struct RecordSpan {
  int64_t offset = 0;  // of the record's header in the file
  int64_t size = 0;    // header + data + footer (DALI's index "size")
};

// Walks the records of a whole TFRecord file held in memory. Errors name `path` and the
// record's offset: truncated headers or data, a length that runs past the end, and (when
// `check_crc`) length or data CRC mismatches.
std::vector<RecordSpan> index_tfrecord(std::span<const uint8_t> file, const std::string& path,
                                       bool check_crc);

// The payload of the record at `r` (checked as above).
std::span<const uint8_t> tfrecord_payload(std::span<const uint8_t> file, const RecordSpan& r,
                                          const std::string& path, bool check_crc);

// Parses a DALI tfrecord2idx index ("offset size" per line). Throws ValueError naming the
// line; `file_size` (when >= 0) bounds the spans.
std::vector<RecordSpan> parse_tfrecord_index(std::string_view text, const std::string& path,
                                             int64_t file_size = -1);
std::string format_tfrecord_index(const std::vector<RecordSpan>& spans);

// Decompresses a gzip stream (concatenated members allowed). Throws ValueError naming `path`
// for corrupt data, and for data that inflates beyond `limit` bytes (0: kMaxGzipRatio times
// its size, at least 64 MiB): a gzip bomb must not exhaust memory.
inline constexpr size_t kMaxGzipRatio = 1024;
std::vector<uint8_t> gunzip(std::span<const uint8_t> data, const std::string& path,
                            size_t limit = 0);
bool is_gzip(std::span<const uint8_t> data);

}  // namespace stoker::readers
