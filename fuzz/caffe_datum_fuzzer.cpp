// libFuzzer target: Datum parsing must give a result or a stoker::ValueError for any input.
#include <cstddef>
#include <cstdint>

#include "stoker/core/error.hpp"
#include "stoker/readers/caffe_datum.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    stoker::readers::parse_datum({data, size});
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
