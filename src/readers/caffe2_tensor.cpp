#include "stoker/readers/caffe2_tensor.hpp"

#include "stoker/core/error.hpp"
#include "stoker/readers/protobuf_wire.hpp"

namespace stoker::readers {
namespace {

TensorProtoView parse_tensor(std::span<const uint8_t> data) {
  const std::string what = "TensorProto";
  TensorProtoView t;
  WireReader r(data, what);
  WireField f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        append_repeated_varints(f, t.dims, what);
        break;
      case 2:
        t.data_type = int(f.value);
        break;
      case 3:
        append_repeated_fixed(f, t.floats, what);
        break;
      case 4:
      case 10:
        append_repeated_varints(f, t.ints, what);
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
        append_repeated_fixed(f, t.doubles, what);
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
