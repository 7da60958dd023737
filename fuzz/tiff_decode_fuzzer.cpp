// libFuzzer target: the TIFF decoder (libtiff behind read_tiff_header / decode_tiff, strips and
// tiles, planes, 8/16-bit and palettes) must give an image or a stoker::ValueError for any
// input, for every output type and both precisions, and a window, within a pixel limit.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/tiff/tiff_decoder.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::codecs;
  const int64_t max_pixels = int64_t(1) << 16;  // small: many executions per second
  try {
    const TiffInfo info = read_tiff_header(data, size, max_pixels);
    for (ColorFormat fmt :
         {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray, ColorFormat::kAnyData}) {
      const int64_t stride = info.width * tiff_output_channels(fmt, info);
      for (bool keep_16 : {false, true}) {
        if (keep_16 && info.bits != 16) continue;
        std::vector<uint16_t> out(size_t(stride * info.height));
        try {
          decode_tiff(data, size, info, fmt, out.data(), stride, max_pixels, keep_16);
        } catch (const stoker::ValueError&) {
        }
      }
    }
    // A window of the middle (the decoder's own windowed path).
    const PixelWindow w{info.height / 4, info.width / 3, (info.height + 1) / 2,
                        (info.width + 1) / 2};
    std::vector<uint8_t> out(size_t(w.h * w.w * 3));
    try {
      decode_tiff(data, size, info, ColorFormat::kRGB, out.data(), w.w * 3, max_pixels, false, &w);
    } catch (const stoker::ValueError&) {
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
