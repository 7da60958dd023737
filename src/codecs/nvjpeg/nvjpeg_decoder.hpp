// nvJPEG's hardware JPEG decoder (the GPU's NVJPG engines) behind a small interface without
// nvJPEG types. libnvjpeg is loaded at run time (dlopen), so one build runs on machines with and
// without it; STOKER_DISABLE_NVJPEG=1 turns it off (to test the fallbacks anywhere).
//
// One nvJPEG handle per device is shared by every decoder (nvJPEG handles are thread-safe; two
// hardware handles used from two threads were seen to hang on an H100); each decoder has its
// own decoding state and must be used from one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/core/cuda.hpp"

namespace stoker::codecs {

// Whether the hardware decoder can be used on `device`; otherwise `why` says why not.
bool nvjpeg_hardware_available(int device, std::string* why = nullptr);

class NvjpegHardwareDecoder {
 public:
  explicit NvjpegHardwareDecoder(int device);  // throws RuntimeError when unavailable
  ~NvjpegHardwareDecoder();
  NvjpegHardwareDecoder(const NvjpegHardwareDecoder&) = delete;
  NvjpegHardwareDecoder& operator=(const NvjpegHardwareDecoder&) = delete;

  struct Job {
    const uint8_t* data = nullptr;  // the JPEG, in host memory
    size_t size = 0;
    int64_t y = 0, x = 0, h = 0, w = 0;  // the window to decode (the whole image or a part)
    uint8_t* out = nullptr;              // device: h rows of w * 3 bytes, `pitch` apart
    int64_t pitch = 0;
  };
  // Prepares `slots` probes for supports(), one per thread that calls it.
  void reserve_slots(int slots);
  // Whether the engines can decode this stream's window (baseline, one scan, supported
  // subsampling, 8-bit, 3 components...). Parses the stream on the host; threads may call it
  // at once with different slots.
  bool supports(const Job& job, int slot);
  // Decodes every job to interleaved RGB (BGR when `bgr`), enqueued on `stream`. Throws
  // RuntimeError with nvJPEG's status when the batch fails (callers decode it elsewhere).
  void decode(const std::vector<Job>& jobs, bool bgr, StreamHandle stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
