// libFuzzer target: decoders.inflate's LZ4 block decoder must inflate, or say the block is
// malformed or too large, for any block and output size, never touching memory outside the
// two. Input: a 2-byte little-endian output capacity, then the block.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/kernels/compression/lz4_inflate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace k = stoker::kernels;
  if (size < 2 || !k::lz4_available()) return 0;
  std::vector<uint8_t> out(size_t(data[0]) | size_t(data[1]) << 8);
  // An exact-size source buffer, so that ASan sees any read past the block.
  std::vector<uint8_t> block(data + 2, data + size);
  const int64_t n = k::lz4_inflate_cpu(block.data(), block.size(), out.data(), out.size());
  if (n > int64_t(out.size()) || (n < 0 && n != k::kLz4Malformed && n != k::kLz4TooLarge))
    __builtin_trap();
  return 0;
}
