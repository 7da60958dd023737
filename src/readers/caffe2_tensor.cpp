#include "stoker/readers/caffe2_tensor.hpp"

#include <cstring>

#include "stoker/core/error.hpp"
#include "stoker/readers/protobuf_wire.hpp"

namespace stoker::readers {
namespace {

// Repeated varint fields, packed or not.
void read_varints(const WireField& f, std::vector<int64_t>& out, const std::string& what) {
  if (f.type == WireType::kVarint) {
    out.push_back(int64_t(f.value));
  } else if (f.type == WireType::kBytes) {
    size_t pos = 0;
    while (pos < f.bytes.size())
      out.push_back(int64_t(WireReader::read_varint(f.bytes, pos, what)));
  } else {
    throw ValueError("malformed " + what + ": integer field of the wrong wire type");
  }
}

template <typename T, WireType kFixed>
void read_fixed(const WireField& f, std::vector<T>& out, const std::string& what) {
  if (f.type == kFixed) {
    T v;
    std::memcpy(&v, &f.value, sizeof(T));
    out.push_back(v);
  } else if (f.type == WireType::kBytes && f.bytes.size() % sizeof(T) == 0) {
    size_t n = f.bytes.size() / sizeof(T), old = out.size();
    out.resize(old + n);
    if (n) std::memcpy(out.data() + old, f.bytes.data(), n * sizeof(T));
  } else {
    throw ValueError("malformed " + what + ": floating-point field of the wrong wire type");
  }
}

TensorProtoView parse_tensor(std::span<const uint8_t> data) {
  const std::string what = "TensorProto";
  TensorProtoView t;
  WireReader r(data, what);
  WireField f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        read_varints(f, t.dims, what);
        break;
      case 2:
        t.data_type = int(f.value);
        break;
      case 3:
        read_fixed<float, WireType::kFixed32>(f, t.floats, what);
        break;
      case 4:
      case 10:
        read_varints(f, t.ints, what);
        break;
      case 5:
        STOKER_ENFORCE(f.type == WireType::kBytes, ValueError, "malformed ", what, ": byte_data");
        t.bytes = f.bytes;
        break;
      case 6:
        STOKER_ENFORCE(f.type == WireType::kBytes, ValueError, "malformed ", what, ": string_data");
        t.strings.push_back(f.bytes);
        break;
      case 9:
        read_fixed<double, WireType::kFixed64>(f, t.doubles, what);
        break;
      default:
        break;
    }
  }
  for (auto& i : t.ints) {  // int32_data holds sign-extended varints
    if (t.data_type == TensorProtoView::kInt32) i = int64_t(int32_t(i));
  }
  return t;
}

}  // namespace

std::vector<TensorProtoView> parse_tensor_protos(std::span<const uint8_t> value) {
  std::vector<TensorProtoView> out;
  WireReader r(value, "TensorProtos");
  WireField f;
  while (r.next(f)) {
    if (f.number != 1) continue;
    STOKER_ENFORCE(f.type == WireType::kBytes, ValueError, "malformed TensorProtos: protos");
    out.push_back(parse_tensor(f.bytes));
  }
  return out;
}

}  // namespace stoker::readers
