// JPEG decoding on the CPU with libjpeg-turbo (libjpeg API, islow IDCT and fancy upsampling:
// bit-exact with libjpeg-turbo's djpeg and PIL). One JpegDecoder per thread; it reuses its
// decompressor across images.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct JpegInfo {
  int64_t height = 0;
  int64_t width = 0;
  int components = 0;  // in the file: 1 (gray), 3 (YCbCr/RGB) or 4 (CMYK/YCCK)
  bool progressive = false;
  bool arithmetic = false;  // arithmetic instead of Huffman entropy coding
  // Chroma subsampling of 3-component files: "444", "422", "420", "440", "411", "410" or
  // "other" (empty for other component counts).
  std::string subsampling;
};

struct JpegLimits {
  int64_t max_pixels = int64_t(1) << 27;  // refused before anything is allocated
  int max_scans = 500;                    // progressive scan bomb guard
  // Raise on libjpeg warnings about the data (corrupt entropy-coded data, a scan that ends
  // early, junk before a marker) instead of returning what libjpeg-turbo outputs.
  bool strict = false;
};

// Channels of the output for a colour format: ANY_DATA gives 1 for grayscale JPEGs, else 3.
inline int jpeg_output_channels(ColorFormat fmt, const JpegInfo& info) {
  if (fmt != ColorFormat::kAnyData) return color_channels(fmt);
  return info.components == 1 ? 1 : 3;
}

// A window of the image: rows [y, y + height), columns [x, x + width). width 0: all of it.
// `scale` > 1 decodes the image downscaled by 1/scale in the DCT domain (libjpeg's
// scale_denom: 2, 4 or 8), the window then in the downscaled image's coordinates. That is
// not a decode followed by a resize: the pixels differ (and the cost falls ~scale^2 times).
struct JpegRegion {
  int64_t y = 0, x = 0, height = 0, width = 0;
  int scale = 1;
};

// The extent of a dimension of `extent` pixels decoded at 1/scale (libjpeg rounds up).
inline int64_t scaled_extent(int64_t extent, int scale) { return (extent + scale - 1) / scale; }

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  // Reads the header. Throws ValueError with libjpeg's message on a malformed stream, or when
  // the image exceeds limits.max_pixels.
  JpegInfo read_header(const uint8_t* data, size_t size, const JpegLimits& limits = {});

  // Decodes the whole image into `out` (height rows of width * color_channels(fmt) bytes,
  // `row_stride` bytes apart). CMYK/YCCK (Adobe, inverted) is converted as R = C*K/255 (and
  // so on), like OpenCV. Streams libjpeg-turbo decodes only with a warning about the data
  // (corrupt entropy-coded data, a scan that ends early: grey below the data, extraneous
  // bytes before a marker) give what it outputs, as PIL and torchvision do; warnings() says
  // how many there were. With limits.strict they raise ValueError. Streams it cannot decode,
  // and streams cut short before their end (no EOI marker), raise ValueError.
  void decode(const uint8_t* data, size_t size, ColorFormat fmt, uint8_t* out, int64_t row_stride,
              const JpegLimits& limits = {});
  // Decodes only `region` into `out` (region.height rows of region.width pixels): rows above
  // are skipped and rows below never decoded, columns limited to the iMCUs that cover it.
  // The pixels equal the same window of a whole decode.
  void decode_region(const uint8_t* data, size_t size, ColorFormat fmt, const JpegRegion& region,
                     uint8_t* out, int64_t row_stride, const JpegLimits& limits = {});

  // The data warnings of the last read_header/decode (0 when clean), and the first's message.
  int warnings() const;
  std::string first_warning() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
