// A minimal reader of the protocol-buffer wire format: enough to walk the fields of the few
// messages stoker reads (tf.train.Example, Caffe Datum, Caffe2 TensorProtos) without a
// protobuf runtime. Chosen over libprotobuf because those messages use a handful of fields,
// the reader must reject hostile input with a clear error (and is fuzzed), and it keeps
// generated code and a version-sensitive dependency out of the build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace stoker::readers {

enum class WireType : int { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

struct WireField {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;              // varint, fixed32 or fixed64 payload
  std::span<const uint8_t> bytes;  // length-delimited payload
};

class WireReader {
 public:
  // `what` names the message in errors ("Example", "Datum", ...).
  WireReader(std::span<const uint8_t> data, std::string what)
      : data_(data), what_(std::move(what)) {}
  // Reads the next field; false at the end. Throws ValueError ("malformed <what>: ... at byte
  // N") on truncation, bad wire types or group fields.
  bool next(WireField& field);
  size_t position() const { return pos_; }

  // Decodes a packed or single varint/fixed field into callbacks of values.
  static uint64_t read_varint(std::span<const uint8_t> data, size_t& pos, const std::string& what);

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
  std::string what_;
};

[[noreturn]] void throw_bad_repeated(const std::string& what);

// One occurrence of a repeated integer field (varint; packed or not), appended to `out`.
// Throws ValueError for another wire type.
void append_repeated_varints(const WireField& f, std::vector<int64_t>& out,
                             const std::string& what);

// One occurrence of a repeated float (fixed32) or double (fixed64) field, packed or not.
template <typename T>
void append_repeated_fixed(const WireField& f, std::vector<T>& out, const std::string& what) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  constexpr WireType kSingle = sizeof(T) == 4 ? WireType::kFixed32 : WireType::kFixed64;
  if (f.type == kSingle) {
    T v;
    std::memcpy(&v, &f.value, sizeof(T));  // little-endian host: the low bytes hold the value
    out.push_back(v);
    return;
  }
  if (f.type != WireType::kBytes || f.bytes.size() % sizeof(T) != 0) throw_bad_repeated(what);
  size_t n = f.bytes.size() / sizeof(T), old = out.size();
  out.resize(old + n);
  if (n) std::memcpy(out.data() + old, f.bytes.data(), n * sizeof(T));
}

}  // namespace stoker::readers
