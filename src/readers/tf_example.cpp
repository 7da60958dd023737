#include "stoker/readers/tf_example.hpp"

#include "stoker/core/error.hpp"
#include "stoker/readers/protobuf_wire.hpp"

namespace stoker::readers {
namespace {

// Field 1 (value) of FloatList / Int64List: repeated, packed or not.
template <typename T>
void read_numbers(std::span<const uint8_t> list, std::vector<T>& out, const char* what) {
  WireReader r(list, what);
  WireField f;
  while (r.next(f)) {
    if (f.number != 1) continue;
    if constexpr (std::is_same_v<T, float>) {
      append_repeated_fixed(f, out, what);
    } else {
      append_repeated_varints(f, out, what);
    }
  }
}

FeatureValue parse_feature(std::span<const uint8_t> data) {
  FeatureValue v;
  WireReader r(data, "Feature");
  WireField f;
  while (r.next(f)) {
    if (f.type != WireType::kBytes || f.number < 1 || f.number > 3) continue;
    if (f.number == 1) {
      v.kind = FeatureValue::Kind::kBytes;
      v.bytes.clear();
      WireReader lr(f.bytes, "BytesList");
      WireField item;
      while (lr.next(item))
        if (item.number == 1 && item.type == WireType::kBytes) v.bytes.push_back(item.bytes);
    } else if (f.number == 2) {
      v.kind = FeatureValue::Kind::kFloat;
      v.floats.clear();
      read_numbers(f.bytes, v.floats, "FloatList");
    } else {
      v.kind = FeatureValue::Kind::kInt64;
      v.ints.clear();
      read_numbers(f.bytes, v.ints, "Int64List");
    }
  }
  return v;
}

}  // namespace

std::map<std::string, FeatureValue> parse_example(std::span<const uint8_t> record) {
  std::map<std::string, FeatureValue> out;
  WireReader ex(record, "Example");
  WireField f;
  while (ex.next(f)) {
    if (f.number != 1 || f.type != WireType::kBytes) continue;  // Example.features
    WireReader features(f.bytes, "Features");
    WireField entry;
    while (features.next(entry)) {
      if (entry.number != 1 || entry.type != WireType::kBytes) continue;  // map entries
      WireReader kv(entry.bytes, "Features map entry");
      WireField part;
      std::string key;
      std::span<const uint8_t> value;
      while (kv.next(part)) {
        if (part.type != WireType::kBytes) continue;
        if (part.number == 1) key.assign(part.bytes.begin(), part.bytes.end());
        if (part.number == 2) value = part.bytes;
      }
      out[key] = parse_feature(value);
    }
  }
  return out;
}

}  // namespace stoker::readers
