// libFuzzer target: RecordIO framing, record joining, IRHeader parsing and .idx parsing must
// give a result or a stoker::ValueError for any input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stoker/core/error.hpp"
#include "stoker/readers/recordio.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::readers;
  std::span<const uint8_t> in(data, size);
  try {
    for (auto& e : index_recordio(in, "fuzz"))
      parse_image_record(read_recordio_record(in, e, "fuzz"), "fuzz");
  } catch (const stoker::ValueError&) {
  }
  try {
    parse_image_record(in, "fuzz");
  } catch (const stoker::ValueError&) {
  }
  try {
    parse_recordio_index(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
                         int64_t(size) + 100);
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
