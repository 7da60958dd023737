#include "stoker/readers/tfrecord.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include "stoker/core/error.hpp"
#include "stoker/readers/text_lines.hpp"

namespace stoker::readers {
namespace {

// Slice-by-one table for the Castagnoli polynomial (reflected 0x82F63B78).
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

uint32_t crc32c(const uint8_t* data, size_t size, uint32_t crc) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = kTable[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t masked_crc32c(const uint8_t* data, size_t size) {
  uint32_t c = crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::span<const uint8_t> tfrecord_payload(std::span<const uint8_t> file, const RecordSpan& r,
                                          const std::string& path, bool check_crc) {
  const auto where = [&] { return detail::concat(path, ": record at offset ", r.offset, ": "); };
  STOKER_ENFORCE(r.offset >= 0 && uint64_t(r.offset) + 12 <= file.size(), ValueError, where(),
                 "truncated header (file has ", file.size(), " bytes)");
  const uint8_t* h = file.data() + r.offset;
  uint64_t length = load_u64(h);
  if (check_crc) {
    uint32_t stored = load_u32(h + 8), computed = masked_crc32c(h, 8);
    STOKER_ENFORCE(stored == computed, ValueError, where(),
                   "length CRC mismatch (the header is "
                   "corrupt or this is not a TFRecord file)");
  }
  STOKER_ENFORCE(length <= file.size() - uint64_t(r.offset) - 12 &&
                     file.size() - uint64_t(r.offset) - 12 - length >= 4,
                 ValueError, where(), "length ", length, " runs past the end of the file (",
                 file.size(), " bytes)");
  const uint8_t* data = h + 12;
  if (check_crc) {
    uint32_t stored = load_u32(data + length), computed = masked_crc32c(data, size_t(length));
    STOKER_ENFORCE(stored == computed, ValueError, where(),
                   "data CRC mismatch: the record is "
                   "corrupt");
  }
  return {data, size_t(length)};
}

std::vector<RecordSpan> index_tfrecord(std::span<const uint8_t> file, const std::string& path,
                                       bool check_crc) {
  std::vector<RecordSpan> out;
  uint64_t pos = 0;
  while (pos < file.size()) {
    RecordSpan r{int64_t(pos), 0};
    auto payload = tfrecord_payload(file, r, path, check_crc);
    r.size = int64_t(payload.size()) + 16;
    out.push_back(r);
    pos += uint64_t(r.size);
  }
  return out;
}

std::vector<RecordSpan> parse_tfrecord_index(std::string_view text, const std::string& path,
                                             int64_t file_size) {
  std::vector<RecordSpan> out;
  for_each_line(text, [&](std::string_view line, int lineno) {
    RecordSpan r;
    const bool ok = parse_two_integers(line, r.offset, r.size) && r.offset >= 0 && r.size >= 16;
    STOKER_ENFORCE(ok, ValueError, path, " line ", lineno, ": expected '<offset> <size>', got '",
                   line, "'");
    STOKER_ENFORCE(file_size < 0 || r.offset <= file_size - r.size, ValueError, path, " line ",
                   lineno, ": record [", r.offset, ", ", uint64_t(r.offset) + uint64_t(r.size),
                   ") runs past the end of the data file (", file_size, " bytes)");
    out.push_back(r);
  });
  return out;
}

std::string format_tfrecord_index(const std::vector<RecordSpan>& spans) {
  std::string s;
  for (auto& r : spans) s += detail::concat(r.offset, " ", r.size, "\n");
  return s;
}

bool is_gzip(std::span<const uint8_t> d) { return d.size() >= 2 && d[0] == 0x1f && d[1] == 0x8b; }

std::vector<uint8_t> gunzip(std::span<const uint8_t> data, const std::string& path, size_t limit) {
  // Against gzip bombs: real containers inflate a few times over, a bomb a thousand times.
  if (limit == 0) limit = std::max(size_t(64) << 20, data.size() * kMaxGzipRatio);
  std::vector<uint8_t> out;
  z_stream z{};
  STOKER_ENFORCE(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK, RuntimeError, "zlib init failed");
  size_t fed = 0;  // input handed to zlib so far (in pieces: avail_in is 32-bit)
  auto feed = [&] {
    const size_t n = std::min<size_t>(data.size() - fed, size_t(1) << 30);
    z.next_in = const_cast<Bytef*>(data.data() + fed);
    z.avail_in = uInt(n);
    fed += n;
  };
  feed();
  uint8_t chunk[1 << 16];
  int rc = Z_OK;
  bool too_big = false;
  while (true) {
    if (z.avail_in == 0 && fed < data.size()) feed();
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    out.insert(out.end(), chunk, chunk + (sizeof chunk - z.avail_out));
    if (out.size() > limit) {
      too_big = true;
      break;
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0 && fed == data.size()) break;
      inflateReset(&z);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && fed == data.size() && z.avail_out != 0) {
      rc = Z_BUF_ERROR;  // input ended inside a member
      break;
    }
  }
  std::string msg = z.msg ? z.msg : "";
  size_t at = fed - z.avail_in;
  inflateEnd(&z);
  STOKER_ENFORCE(!too_big, ValueError, path, ": gzip data of ", data.size(),
                 " bytes inflates beyond ", limit,
                 " bytes; refusing it as a likely gzip bomb (the limit is ", kMaxGzipRatio,
                 " times the compressed size, at least 64 MiB)");
  STOKER_ENFORCE(rc == Z_STREAM_END, ValueError, path,
                 ": corrupt or truncated gzip data near byte ", at, msg.empty() ? "" : " (", msg,
                 msg.empty() ? "" : ")");
  return out;
}

}  // namespace stoker::readers
