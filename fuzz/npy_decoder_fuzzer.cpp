// libFuzzer target: decoders.numpy's per-sample path (DALI's version rule over the shared .npy
// header parser, C order and the conversion to another dtype) must give an array or a
// stoker::ValueError for any input. The output dtype comes from the input's length, so that
// the shared .npy corpus exercises the conversions too.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/ops/decoders/numpy_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stoker::DType;
  static constexpr DType kOut[] = {DType::kBool, DType::kU8,  DType::kU16, DType::kU32,
                                   DType::kU64,  DType::kI8,  DType::kI16, DType::kI32,
                                   DType::kI64,  DType::kF16, DType::kF32, DType::kF64};
  try {
    auto h = stoker::ops::parse_npy_sample({data, size});
    const DType out = size % 2 ? h.dtype : kOut[size / 2 % std::size(kOut)];
    size_t count = 1;
    for (auto d : h.shape) count *= size_t(d);
    if (count <= (size_t(1) << 22)) {
      std::vector<uint8_t> buf(count * stoker::dtype_size(out));
      stoker::ops::decode_npy_sample(h, data, out, buf.data());
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
