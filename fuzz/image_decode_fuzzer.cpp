// libFuzzer target: codecs::Decoder (format detection, then JPEG, PNG, BMP, PNM, WebP or TIFF;
// whole images, 16-bit PNGs and TIFFs at full precision too, and a window) must give an image or a
// stoker::ValueError for any input, for every output type, within a pixel limit.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "stoker/codecs/decoder.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::codecs;
  static Decoder decoder;
  const DecodeLimits limits{1 << 20};
  for (ColorFormat fmt :
       {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray, ColorFormat::kAnyData}) {
    try {
      auto info = decoder.info(data, size, fmt, limits);
      const int64_t stride = info.width * info.channels;
      std::unique_ptr<uint8_t[]> out(new uint8_t[size_t(stride * info.height)]);
      decoder.decode(data, size, fmt, info, out.get(), stride, limits);
      if (info.bit_depth == 16) {  // full precision (16-bit PNG)
        std::unique_ptr<uint16_t[]> wide(new uint16_t[size_t(stride * info.height)]);
        decoder.decode16(data, size, fmt, info, wide.get(), stride, limits);
      }
      // A window in the middle: JPEG region decoding (row skipping, iMCU column cropping).
      const int64_t h = (info.height + 1) / 2, w = (info.width + 1) / 2;
      decoder.decode_region(data, size, fmt, info, info.height / 4, info.width / 4, h, w, out.get(),
                            w * info.channels, limits);
    } catch (const stoker::ValueError&) {
    }
  }
  return 0;
}
