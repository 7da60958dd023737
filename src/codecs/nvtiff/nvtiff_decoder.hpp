// nvTIFF (the GPU's TIFF decoder, libnvtiff 0.8) behind an interface without its types: the
// mixed image decoders decode TIFF with it on the GPU. libnvtiff is opened at run time (the
// system's, or PyPI's nvidia-nvtiff-cu13: `pip install stoker[cuda]`), so one build runs with and
// without it; STOKER_DISABLE_NVTIFF=1 turns it off.
#pragma once

#include <memory>
#include <string>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/core/cuda.hpp"

namespace stoker::codecs {

// Whether nvTIFF can be used on `device`; otherwise `why` says why not.
bool nvtiff_available(int device, std::string* why = nullptr);
// "" when libnvtiff loads with every entry point stoker uses (whatever the devices), else why
// not.
std::string nvtiff_unavailable();

// Decodes one image at a time; used from one thread at a time.
class NvtiffDecoder {
 public:
  explicit NvtiffDecoder(int device);  // throws RuntimeError when unavailable
  ~NvtiffDecoder();
  NvtiffDecoder(const NvtiffDecoder&) = delete;
  NvtiffDecoder& operator=(const NvtiffDecoder&) = delete;

  // Decodes the first image of job.data (a TIFF in host memory) — the window y, x, h, w of it
  // — into job.out: h rows of w * `channels` bytes, job.pitch apart. nvTIFF takes one image at
  // a time: it decodes on a stream of its own that first waits for `stream`'s work (the
  // output's earlier users), and the image is complete when this returns. Returns false, for
  // the CPU decoder to decode it, for what it would not give as the CPU decoder does: samples
  // other than 8-bit unsigned, planes, other kinds than gray (min-is-black) and RGB, with or
  // without alpha, other compressions than none, LZW, Deflate and PackBits (its JPEG is not
  // libjpeg-turbo's), a fill order or predictor other than 1, strips or tiles past the end of
  // the file, another number of samples than `channels` or another size than the height x
  // width the CPU decoder's header pass saw, or what nvTIFF refuses.
  bool decode(const NvjpegJob& job, int channels, int64_t height, int64_t width,
              StreamHandle stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
