// libFuzzer target: TensorProtos parsing must give a result or a stoker::ValueError.
#include <cstddef>
#include <cstdint>

#include "stoker/core/error.hpp"
#include "stoker/readers/caffe2_tensor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    stoker::readers::parse_tensor_protos({data, size});
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
