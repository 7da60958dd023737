// libFuzzer target: .npy header parsing and C-order conversion must give an array or a
// stoker::ValueError for any input, and an array that can be handed over: no more dimensions
// than numpy and DLPack consumers take (an array of 129 dimensions once aborted the
// interpreter when the batch was converted).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/core/shape.hpp"
#include "stoker/readers/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto h = stoker::readers::parse_npy_header({data, size}, "fuzz");
    if (h.shape.size() > size_t(stoker::kMaxNdim)) __builtin_trap();
    if (h.data_bytes() <= (size_t(1) << 24)) {
      std::vector<uint8_t> out(h.data_bytes());
      stoker::readers::npy_to_c_order(h, data + h.data_offset, out.data());
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
