// libFuzzer target: TFRecord framing (with and without CRC checks) and tf.train.Example
// parsing of every record, plus the input itself parsed as an Example and as an index file.
// Outcome must be a result or stoker::ValueError, never a crash or hang.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "stoker/core/error.hpp"
#include "stoker/readers/tf_example.hpp"
#include "stoker/readers/tfrecord.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::readers;
  std::span<const uint8_t> in(data, size);
  for (bool crc : {true, false}) {
    try {
      for (auto& r : index_tfrecord(in, "fuzz", crc))
        parse_example(tfrecord_payload(in, r, "fuzz", crc));
    } catch (const stoker::ValueError&) {
    }
  }
  try {
    parse_example(in);
  } catch (const stoker::ValueError&) {
  }
  try {
    parse_tfrecord_index(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
                         1 << 20);
  } catch (const stoker::ValueError&) {
  }
  if (is_gzip(in) && size < (1 << 16)) {
    try {
      gunzip(in, "fuzz");
    } catch (const stoker::ValueError&) {
    }
  }
  return 0;
}
