// The mixed image decoders' GPU decoders of formats other than JPEG: JPEG 2000 with nvJPEG2000,
// TIFF with nvTIFF, each where its library is found. They decode 8-bit images as stored (the
// components as they are: no BGR, no conversion to gray or colour, no 16 bits), straight into
// the output on the mixed stage's stream; each library refuses, image by image, what it would
// not give as the CPU decoder does, and those go to the CPU threads.
#pragma once

#ifdef STOKER_HAVE_CUDA
#include <memory>
#include <string>
#include <vector>

#include "stoker/codecs/decoder.hpp"
#include "stoker/codecs/nvjpeg2k/nvjpeg2k_decoder.hpp"
#include "stoker/codecs/nvtiff/nvtiff_decoder.hpp"
#include "stoker/core/batch.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::ops::decoders_detail {

class OtherFormatsGpu {
 public:
  // Opens the libraries found (once; from one thread).
  void open(int device);
  bool has_jpeg2000() const { return j2k_ != nullptr; }
  bool has_tiff() const { return tiff_ != nullptr; }

  // Whether one of them may take an image of `info` for an output of `format` and `dtype`.
  bool takes(const codecs::ImageInfo& info, codecs::ColorFormat format, DType dtype,
             bool ycbcr) const;

  struct Result {
    std::vector<int> refused;  // for the CPU
    int jpeg2000 = 0, tiff = 0, jpeg2000_refused = 0, tiff_refused = 0;
  };
  // Decodes `samples` of `in` (their jobs' windows, `infos`' formats) into `out` on `stream`.
  Result decode(const std::vector<int>& samples, const Batch& in,
                const std::vector<codecs::ImageInfo>& infos, std::vector<codecs::NvjpegJob>& jobs,
                Batch& out, StreamHandle stream);

 private:
  std::unique_ptr<codecs::Nvjpeg2kDecoder> j2k_;
  std::unique_ptr<codecs::NvtiffDecoder> tiff_;
};

}  // namespace stoker::ops::decoders_detail
#endif  // STOKER_HAVE_CUDA
