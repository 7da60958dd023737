// JPEG encoding on the CPU with libjpeg-turbo, as Pillow (and so DALI's
// jpeg_compression_distortion) encodes: baseline, 4:2:0 for colour, the IJG tables scaled to
// `quality` (jpeg_set_quality, forced to baseline), islow DCT, no Huffman optimisation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace stoker::codecs {

class JpegEncoder {
 public:
  JpegEncoder();
  ~JpegEncoder();
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;

  // Encodes `height` rows of `width` pixels of `channels` (1 gray, 3 RGB) bytes, `row_stride`
  // bytes apart, into `out` (replaced). quality: 1..100. Throws ValueError for an image JPEG
  // cannot hold (an extent above 65,500 or 0) with libjpeg's message.
  void encode(const uint8_t* pixels, int64_t height, int64_t width, int channels,
              int64_t row_stride, int quality, std::vector<uint8_t>& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
