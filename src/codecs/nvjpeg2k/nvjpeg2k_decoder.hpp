// nvJPEG2000 (the GPU's JPEG 2000 decoder, libnvjpeg2k) behind an interface without its types:
// the mixed image decoders decode JPEG 2000 with it on the GPU. libnvjpeg2k is opened at run
// time (the system's, or PyPI's nvidia-nvjpeg2k-cu13: `pip install stoker[cuda]`), so one build
// runs with and without it; STOKER_DISABLE_NVJPEG2K=1 turns it off.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/core/cuda.hpp"

namespace stoker::codecs {

// Whether nvJPEG2000 can be used on `device`; otherwise `why` says why not.
bool nvjpeg2k_available(int device, std::string* why = nullptr);
// "" when libnvjpeg2k loads with every entry point stoker uses (whatever the devices), else why
// not.
std::string nvjpeg2k_unavailable();

// Decodes one image at a time on a CUDA stream; used from one thread at a time.
class Nvjpeg2kDecoder {
 public:
  explicit Nvjpeg2kDecoder(int device);  // throws RuntimeError when unavailable
  ~Nvjpeg2kDecoder();
  Nvjpeg2kDecoder(const Nvjpeg2kDecoder&) = delete;
  Nvjpeg2kDecoder& operator=(const Nvjpeg2kDecoder&) = delete;

  // Decodes job.data (a JP2 file or a J2K codestream in host memory, which must stay as it is
  // until `stream`'s work is done: nvJPEG2000 reads it while decoding) — the window y, x, h, w
  // of the height x width image the CPU decoder's header pass saw — into job.out: h rows of
  // w * `channels` bytes, job.pitch apart, enqueued on `stream`. Returns false, for the CPU
  // decoder to decode it, for what it would not give as the CPU decoder does: a truncated file,
  // a JP2 palette or channel remapping (jp2_check.hpp), another number of components than
  // `channels` or another size, a precision other than 8 bits, signed or subsampled
  // components, sYCC, a window of a tiled image, or a stream nvJPEG2000 refuses (what it
  // queued then is overwritten by the CPU's decode, later on the same stream).
  bool decode(const NvjpegJob& job, int channels, int64_t height, int64_t width,
              StreamHandle stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
