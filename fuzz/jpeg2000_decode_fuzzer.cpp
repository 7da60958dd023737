// libFuzzer target: the JPEG 2000 decoder (OpenJPEG behind read_jpeg2000_header /
// decode_jpeg2000: JP2 and J2K, tiles, subsampled components, 1-16 bits) must give an image or a
// stoker::ValueError for any input, for every output type, both precisions and a window, within
// a pixel limit.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/jpeg2000/jpeg2000_decoder.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::codecs;
  const int64_t max_pixels = int64_t(1) << 16;  // small: many executions per second
  try {
    const Jpeg2000Info info = read_jpeg2000_header(data, size, max_pixels);
    for (ColorFormat fmt :
         {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray, ColorFormat::kAnyData}) {
      const int64_t stride = info.width * jpeg2000_output_channels(fmt, info);
      for (bool keep_16 : {false, true}) {
        if (keep_16 && info.bits != 16) continue;
        std::vector<uint16_t> out(size_t(stride * info.height));
        try {
          decode_jpeg2000(data, size, info, fmt, out.data(), stride, max_pixels, keep_16);
        } catch (const stoker::ValueError&) {
        }
      }
    }
    // The window of the middle (opj_set_decode_area).
    const PixelWindow w{info.height / 4, info.width / 3, (info.height + 1) / 2,
                        (info.width + 1) / 2};
    std::vector<uint8_t> out(size_t(w.h * w.w * 3));
    try {
      decode_jpeg2000(data, size, info, ColorFormat::kRGB, out.data(), w.w * 3, max_pixels, false,
                      &w);
    } catch (const stoker::ValueError&) {
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
