// libFuzzer target: PNG header reading and decoding (every output type) must give an image or
// a stoker::ValueError for any input, within a small pixel limit, and a header accepted only
// when the file can hold its image (no allocation the input does not justify: deflate expands
// at most 1032 times).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "stoker/codecs/png/png_decoder.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::codecs;
  const PngLimits limits{1 << 20};
  for (ColorFormat fmt : {ColorFormat::kRGB, ColorFormat::kGray, ColorFormat::kAnyData}) {
    try {
      auto info = read_png_header(data, size, limits);
      const int64_t least = info.height * (1 + (info.width * info.bit_depth + 7) / 8);
      if (least > 1032 * int64_t(size) + 1024) __builtin_trap();
      const int64_t stride = info.width * png_output_channels(fmt, info);
      std::unique_ptr<uint8_t[]> out(new uint8_t[size_t(stride * info.height)]);
      decode_png(data, size, fmt, out.get(), stride, limits);
    } catch (const stoker::ValueError&) {
    }
  }
  return 0;
}
