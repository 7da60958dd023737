#include "stoker/readers/protobuf_wire.hpp"

#include <cstring>

#include "stoker/core/error.hpp"

namespace stoker::readers {

uint64_t WireReader::read_varint(std::span<const uint8_t> data, size_t& pos,
                                 const std::string& what) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    STOKER_ENFORCE(pos < data.size(), ValueError, "malformed ", what, ": truncated varint at byte ",
                   pos);
    uint8_t b = data[pos++];
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw ValueError(
      detail::concat("malformed ", what, ": varint longer than 10 bytes at byte ", pos));
}

bool WireReader::next(WireField& f) {
  if (pos_ >= data_.size()) return false;
  const size_t start = pos_;
  uint64_t key = read_varint(data_, pos_, what_);
  f.number = uint32_t(key >> 3);
  STOKER_ENFORCE(f.number != 0 && (key >> 3) <= 0x1fffffff, ValueError, "malformed ", what_,
                 ": invalid field number at byte ", start);
  const int type = int(key & 7);
  f.bytes = {};
  f.value = 0;
  switch (type) {
    case 0:
      f.type = WireType::kVarint;
      f.value = read_varint(data_, pos_, what_);
      return true;
    case 1:
    case 5: {
      size_t n = type == 1 ? 8 : 4;
      STOKER_ENFORCE(data_.size() - pos_ >= n, ValueError, "malformed ", what_, ": truncated fixed",
                     n * 8, " field at byte ", start);
      std::memcpy(&f.value, data_.data() + pos_, n);  // little-endian host
      pos_ += n;
      f.type = type == 1 ? WireType::kFixed64 : WireType::kFixed32;
      return true;
    }
    case 2: {
      uint64_t len = read_varint(data_, pos_, what_);
      STOKER_ENFORCE(len <= data_.size() - pos_, ValueError, "malformed ", what_, ": field ",
                     f.number, " claims ", len, " bytes but only ", data_.size() - pos_,
                     " remain (at byte ", start, ")");
      f.type = WireType::kBytes;
      f.bytes = data_.subspan(pos_, size_t(len));
      pos_ += size_t(len);
      return true;
    }
    default:
      throw ValueError(detail::concat("malformed ", what_, ": unsupported wire type ", type,
                                      " at byte ", start));
  }
}

void throw_bad_repeated(const std::string& what) {
  throw ValueError("malformed " + what + ": repeated field of the wrong wire type or size");
}

void append_repeated_varints(const WireField& f, std::vector<int64_t>& out,
                             const std::string& what) {
  if (f.type == WireType::kVarint) {
    out.push_back(int64_t(f.value));
  } else if (f.type == WireType::kBytes) {
    size_t pos = 0;
    while (pos < f.bytes.size())
      out.push_back(int64_t(WireReader::read_varint(f.bytes, pos, what)));
  } else {
    throw_bad_repeated(what);
  }
}

}  // namespace stoker::readers
