// libFuzzer target: tar parsing and webdataset grouping must give a result or a
// stoker::ValueError for any input.
#include <cstddef>
#include <cstdint>

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
  return 0;
}
