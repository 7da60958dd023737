// One entry point for every image format: detects the format from the magic bytes and hands
// the data to its decoder. One Decoder per thread (it keeps a JPEG decompressor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "stoker/codecs/image_format.hpp"

namespace stoker::codecs {

struct DecodeLimits {
  int64_t max_pixels = int64_t(1) << 27;  // refused before anything is allocated
  bool strict = false;                    // JPEG: data warnings raise (see JpegLimits)
};

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t height = 0, width = 0;
  int channels = 0;     // of the output for the requested ColorFormat
  int stored_channels = 0;  // TIFF and JPEG 2000: the channels as the file holds them
  int orientation = 1;  // EXIF orientation (JPEG, PNG, WebP, TIFF), 1..8; not applied here
  int bit_depth = 8;    // 16 for 16-bit PNGs, TIFFs (and TIFF palettes) and JPEG 2000s of 9 to 16
                        // bits, which decode16() keeps
  // JPEG only: what hardware decoders care about.
  bool jpeg_baseline_huffman = false;  // sequential (not progressive), Huffman-coded
  bool jpeg_arithmetic = false;        // arithmetic-coded (rare; nvJPEG cannot decode it)
  int jpeg_components = 0;
  std::string jpeg_subsampling;  // see JpegInfo
};

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // The output's size for `fmt`. Throws ValueError naming the format for unrecognised or
  // unsupported data, malformed headers and images above limits.max_pixels.
  ImageInfo info(const uint8_t* data, size_t size, ColorFormat fmt, const DecodeLimits& limits);
  // Decodes into height rows of width * channels bytes, `row_stride` apart (`info` from info()).
  void decode(const uint8_t* data, size_t size, ColorFormat fmt, const ImageInfo& info,
              uint8_t* out, int64_t row_stride, const DecodeLimits& limits);
  // The whole of a 16-bit image (info.bit_depth == 16) at full precision: height rows of
  // width * channels uint16 samples, `row_stride` samples apart.
  void decode16(const uint8_t* data, size_t size, ColorFormat fmt, const ImageInfo& info,
                uint16_t* out, int64_t row_stride, const DecodeLimits& limits);
  // Decodes only the window rows [y, y + h), columns [x, x + w) of the image as stored (no
  // orientation applied). JPEG decodes just the rows and iMCU columns it needs, JPEG 2000 just
  // the code-blocks, TIFF the strips or tiles, WebP down to the window's last macroblock row; the
  // other formats decode whole and copy the window. Same pixels as the window
  // of decode(). `scale` (JPEG only: 1, 2, 4 or 8) decodes at 1/scale in the DCT domain, the window
  // then in the downscaled image (see JpegRegion): different pixels from decode + resize.
  void decode_region(const uint8_t* data, size_t size, ColorFormat fmt, const ImageInfo& info,
                     int64_t y, int64_t x, int64_t h, int64_t w, uint8_t* out, int64_t row_stride,
                     const DecodeLimits& limits, int scale = 1);
  // What the last decode*() call decoded past (libjpeg-turbo's first warning about corrupt or
  // truncated data, decoded anyway); empty when the data was clean.
  const std::string& warning() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
