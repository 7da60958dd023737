#include "stoker/readers/recordio.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "stoker/core/error.hpp"
#include "stoker/readers/text_lines.hpp"

namespace stoker::readers {
namespace {

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

struct Part {
  uint32_t cflag;
  uint32_t length;
  uint64_t data;  // offset of the data
  uint64_t next;  // offset of the next part
};

Part read_part(std::span<const uint8_t> f, uint64_t pos, const std::string& path) {
  STOKER_ENFORCE(pos + 8 <= f.size(), ValueError, path, ": record at offset ", pos,
                 ": truncated header (file has ", f.size(), " bytes)");
  uint32_t magic = load_u32(f.data() + pos);
  STOKER_ENFORCE(magic == kRecordIOMagic, ValueError, path, ": record at offset ", pos,
                 ": bad magic (not a RecordIO file, or a corrupt index offset)");
  uint32_t l = load_u32(f.data() + pos + 4);
  Part p{l >> 29, l & ((1u << 29) - 1), pos + 8, 0};
  uint64_t padded = (uint64_t(p.length) + 3) / 4 * 4;
  STOKER_ENFORCE(p.data + p.length <= f.size(), ValueError, path, ": record at offset ", pos,
                 ": length ", p.length, " runs past the end of the file (", f.size(), " bytes)");
  p.next = std::min<uint64_t>(p.data + padded, f.size());
  return p;
}

// Visits the parts of the record at `pos`; returns the offset after it.
template <typename F>
uint64_t walk_record(std::span<const uint8_t> f, uint64_t pos, const std::string& path,
                     F&& f_part) {
  Part p = read_part(f, pos, path);
  STOKER_ENFORCE(p.cflag == 0 || p.cflag == 1, ValueError, path, ": record at offset ", pos,
                 ": starts with a continuation part (flag ", p.cflag, ")");
  f_part(p);
  while (p.cflag == 1 || p.cflag == 2) {
    uint64_t at = p.next;
    p = read_part(f, at, path);
    STOKER_ENFORCE(p.cflag == 2 || p.cflag == 3, ValueError, path, ": record part at offset ", at,
                   ": expected a continuation, got flag ", p.cflag);
    f_part(p);
  }
  return p.next;
}

}  // namespace

std::vector<RecordIOEntry> index_recordio(std::span<const uint8_t> f, const std::string& path) {
  std::vector<RecordIOEntry> out;
  uint64_t pos = 0;
  while (pos < f.size()) {
    uint64_t end = walk_record(f, pos, path, [](const Part&) {});
    out.push_back({int64_t(pos), int64_t(end - pos)});
    pos = end;
  }
  return out;
}

std::vector<uint8_t> read_recordio_record(std::span<const uint8_t> f, const RecordIOEntry& e,
                                          const std::string& path) {
  std::vector<uint8_t> data;
  bool first = true;
  walk_record(f, uint64_t(e.offset), path, [&](const Part& p) {
    if (!first) {  // the magic number that split the record
      uint8_t m[4];
      std::memcpy(m, &kRecordIOMagic, 4);
      data.insert(data.end(), m, m + 4);
    }
    first = false;
    data.insert(data.end(), f.data() + p.data, f.data() + p.data + p.length);
  });
  return data;
}

std::span<const uint8_t> recordio_record_view(std::span<const uint8_t> f, const RecordIOEntry& e,
                                              const std::string& path,
                                              std::vector<uint8_t>& joined) {
  int parts = 0;
  std::span<const uint8_t> only;
  walk_record(f, uint64_t(e.offset), path, [&](const Part& p) {
    if (++parts == 1) only = f.subspan(size_t(p.data), size_t(p.length));
  });
  if (parts == 1) return only;
  joined = read_recordio_record(f, e, path);
  return joined;
}

ImageRecord parse_image_record(std::span<const uint8_t> r, const std::string& where) {
  STOKER_ENFORCE(r.size() >= 24, ValueError, where, ": image record of ", r.size(),
                 " bytes is shorter than its 24-byte IRHeader");
  ImageRecord out;
  uint32_t flag = load_u32(r.data());
  float label;
  std::memcpy(&label, r.data() + 4, 4);
  std::memcpy(&out.id, r.data() + 8, 8);
  std::memcpy(&out.id2, r.data() + 16, 8);
  size_t pos = 24;
  if (flag == 0) {
    out.labels = {label};
  } else {
    STOKER_ENFORCE(r.size() - pos >= size_t(flag) * 4, ValueError, where, ": IRHeader announces ",
                   flag, " labels but the record has ", r.size() - pos, " bytes left");
    out.labels.resize(flag);
    std::memcpy(out.labels.data(), r.data() + pos, size_t(flag) * 4);
    pos += size_t(flag) * 4;
  }
  out.image = r.subspan(pos);
  return out;
}

std::vector<RecordIOEntry> parse_recordio_index(std::string_view text, const std::string& path,
                                                int64_t file_size) {
  std::vector<int64_t> offsets;
  for_each_line(text, [&](std::string_view line, int lineno) {
    int64_t key = 0, offset = -1;
    const bool ok = parse_two_integers(line, key, offset) && offset >= 0;
    STOKER_ENFORCE(ok, ValueError, path, " line ", lineno, ": expected '<key>\\t<offset>', got '",
                   line, "'");
    STOKER_ENFORCE(file_size < 0 || offset < file_size, ValueError, path, " line ", lineno,
                   ": offset ", offset, " is past the end of the data file (", file_size,
                   " bytes)");
    offsets.push_back(offset);
  });
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  std::vector<RecordIOEntry> out;
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t end = i + 1 < offsets.size() ? offsets[i + 1] : file_size;
    out.push_back({offsets[i], end < 0 ? -1 : end - offsets[i]});
  }
  return out;
}

std::string format_recordio_index(const std::vector<RecordIOEntry>& records) {
  std::string out;
  for (size_t k = 0; k < records.size(); ++k)
    out += detail::concat(k, "\t", records[k].offset, "\n");
  return out;
}

}  // namespace stoker::readers
