#include "stoker/readers/caffe_datum.hpp"

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
        append_repeated_fixed(f, d.float_data, "Datum");
        break;
      case 7:
        d.encoded = f.value != 0;
        break;
      default:
        break;  // unknown fields are skipped, as protobuf does
    }
  }
  if (!d.encoded) {
    // Each extent is at most 2^31 - 1: the product of two fits in int64, and the third is
    // compared by division (the product of all three may not fit).
    const auto bytes = int64_t(d.data.size());
    STOKER_ENFORCE(d.channels > 0 && d.height > 0 && d.width > 0 &&
                       bytes % (d.channels * d.height) == 0 &&
                       bytes / (d.channels * d.height) == d.width,
                   ValueError, "raw Datum of ", d.channels, "x", d.height, "x", d.width, " has ",
                   d.data.size(), " bytes of data");
  }
  return d;
}

}  // namespace stoker::readers
