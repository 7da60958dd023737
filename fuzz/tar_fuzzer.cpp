// libFuzzer target: tar parsing, webdataset grouping and DALI webdataset index parsing (and
// writing back what parsed) must give a result or a stoker::ValueError for any input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stoker/core/error.hpp"
#include "stoker/readers/tar.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::readers;
  try {
    auto members = index_tar({data, size}, "fuzz");
    group_webdataset(members, {"jpg;jpeg", "cls"}, "empty", "fuzz");
    group_webdataset(members, {"txt"}, "skip", "fuzz");
  } catch (const stoker::ValueError&) {
  }
  try {
    auto text = std::string_view(reinterpret_cast<const char*>(data), size);
    auto members = parse_wds_index(text, "fuzz", int64_t(size) * 4);
    group_webdataset(members, {"jpg", "cls"}, "empty", "fuzz");
    format_wds_index(members);
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
