// libFuzzer target: PNG header reading and decoding (every output type) must give an image or
// a stoker::ValueError for any input, within a small pixel limit.
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
      const int64_t stride = info.width * png_output_channels(fmt, info);
      std::unique_ptr<uint8_t[]> out(new uint8_t[size_t(stride * info.height)]);
      decode_png(data, size, fmt, out.get(), stride, limits);
    } catch (const stoker::ValueError&) {
    }
  }
  return 0;
}
