#include "stoker/readers/caffe_datum.hpp"

#include <cstring>

#include "stoker/core/error.hpp"
#include "stoker/readers/protobuf_wire.hpp"

namespace stoker::readers {

Datum parse_datum(std::span<const uint8_t> value) {
  Datum d;
  WireReader r(value, "Datum");
  WireField f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        d.channels = int64_t(int32_t(f.value));
        break;
      case 2:
        d.height = int64_t(int32_t(f.value));
        break;
      case 3:
        d.width = int64_t(int32_t(f.value));
        break;
      case 4:
        STOKER_ENFORCE(f.type == WireType::kBytes, ValueError,
                       "malformed Datum: data is not bytes");
        d.data = f.bytes;
        break;
      case 5:
        d.label = int64_t(int32_t(f.value));
        break;
      case 6:
        if (f.type == WireType::kFixed32) {
          float v;
          uint32_t bits = uint32_t(f.value);
          std::memcpy(&v, &bits, 4);
          d.float_data.push_back(v);
        } else if (f.type == WireType::kBytes && f.bytes.size() % 4 == 0) {
          size_t n = f.bytes.size() / 4, old = d.float_data.size();
          d.float_data.resize(old + n);
          if (n) std::memcpy(d.float_data.data() + old, f.bytes.data(), n * 4);
        } else {
          throw ValueError("malformed Datum: float_data of the wrong wire type");
        }
        break;
      case 7:
        d.encoded = f.value != 0;
        break;
      default:
        break;  // unknown fields are skipped, as protobuf does
    }
  }
  if (!d.encoded) {
    STOKER_ENFORCE(d.channels > 0 && d.height > 0 && d.width > 0 &&
                       int64_t(d.data.size()) == d.channels * d.height * d.width,
                   ValueError, "raw Datum of ", d.channels, "x", d.height, "x", d.width, " has ",
                   d.data.size(), " bytes of data");
  }
  return d;
}

}  // namespace stoker::readers
