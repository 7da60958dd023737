// The host half of lz4_inflate.hpp: liblz4's bounds-checked decoder. STOKER_HAVE_LZ4 is set on
// this file alone by src/kernels/CMakeLists.txt when liblz4 is found, so that its presence
// changes no other file's flags.
#include "stoker/kernels/compression/lz4_inflate.hpp"

#include <algorithm>
#include <limits>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_LZ4
#include <lz4.h>
#endif

namespace stoker::kernels {

bool lz4_available() {
#ifdef STOKER_HAVE_LZ4
  return true;
#else
  return false;
#endif
}

int64_t lz4_inflate_cpu(const uint8_t* src, size_t src_size, uint8_t* dst, size_t capacity) {
#ifdef STOKER_HAVE_LZ4
  // liblz4 takes int sizes: a block larger than 2 GiB cannot be an LZ4 block anyway.
  constexpr size_t kMax = size_t(std::numeric_limits<int>::max());
  if (src_size > kMax) return kLz4Malformed;
  const auto* in = reinterpret_cast<const char*>(src);
  auto* out = reinterpret_cast<char*>(dst);
  const int cap = int(std::min(capacity, kMax));
  const int r = LZ4_decompress_safe(in, out, int(src_size), cap);
  if (r >= 0) return r;
  // Too large or malformed: liblz4 says which only by decoding again up to `capacity` and
  // stopping there (a block that fills it continues past it). No scratch memory needed.
  const int partial = LZ4_decompress_safe_partial(in, out, int(src_size), cap, cap);
  return partial == cap ? kLz4TooLarge : kLz4Malformed;
#else
  (void)src, (void)src_size, (void)dst, (void)capacity;
  throw RuntimeError(
      "LZ4 decompression: this stoker was built without liblz4 (Debian liblz4-dev; "
      "scripts/setup installs it)");
#endif
}

}  // namespace stoker::kernels
