// libFuzzer target: the WebP decoder (libwebp behind read_webp_header / decode_webp) must give
// an image or a stoker::ValueError for any input, for every output type, and a window, within a
// pixel limit (image_decode_fuzzer reaches it too, through format detection, with the other
// formats' seeds).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/webp/webp_decoder.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::codecs;
  try {
    // Images up to 64k pixels: small enough for many executions per second, large enough that
    // the limit refuses what libwebp would allocate for bigger claims.
    const WebpInfo info = read_webp_header(data, size, int64_t(1) << 16);
    for (ColorFormat fmt :
         {ColorFormat::kRGB, ColorFormat::kBGR, ColorFormat::kGray, ColorFormat::kAnyData}) {
      const int64_t stride = info.width * webp_output_channels(fmt, info);
      std::vector<uint8_t> out(size_t(stride * info.height));
      try {
        decode_webp(data, size, info, fmt, out.data(), stride);
      } catch (const stoker::ValueError&) {
      }
    }
    // A window of the middle (the decoder's own windowed path).
    const PixelWindow w{info.height / 4, info.width / 3, (info.height + 1) / 2,
                        (info.width + 1) / 2};
    std::vector<uint8_t> out(size_t(w.h * w.w * 3));
    try {
      decode_webp(data, size, info, ColorFormat::kRGB, out.data(), w.w * 3, &w);
    } catch (const stoker::ValueError&) {
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
