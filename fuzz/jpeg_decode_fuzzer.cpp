// libFuzzer target: the JPEG decoder (and the EXIF orientation parser) must return an image or a
// stoker::ValueError for any input, never crash, hang, leak or read out of bounds. Any other
// exception escapes and is reported as a crash.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/exif.hpp"
#include "stoker/codecs/jpeg/jpeg_decoder.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::codecs;
  static JpegDecoder decoder;
  int orientation = jpeg_exif_orientation(data, size);
  if (orientation < 1 || orientation > 8) __builtin_trap();
  JpegLimits limits;
  limits.max_pixels = int64_t(1) << 24;  // keep the fuzzer's memory bounded
  try {
    auto info = decoder.read_header(data, size, limits);
    for (ColorFormat fmt : {ColorFormat::kRGB, ColorFormat::kGray, ColorFormat::kAnyData}) {
      int64_t stride = info.width * jpeg_output_channels(fmt, info);
      std::vector<uint8_t> out(size_t(stride * info.height));
      decoder.decode(data, size, fmt, out.data(), stride, limits);
    }
  } catch (const stoker::ValueError&) {
    // a clear refusal is a correct outcome
  }
  return 0;
}
