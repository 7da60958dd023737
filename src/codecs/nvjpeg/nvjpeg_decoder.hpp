// nvJPEG's decoders behind a small interface without nvJPEG types: the hardware decoder (the
// GPU's NVJPG engines, batched) and the CUDA decoders (Huffman on a CPU thread or the GPU, the
// rest in CUDA kernels). libnvjpeg is loaded at run time (dlopen), so one build runs on machines
// with and without it; STOKER_DISABLE_NVJPEG=1 turns it off (to test the fallbacks anywhere).
//
// One nvJPEG handle per device is shared by every decoder (nvJPEG handles are thread-safe; two
// hardware handles used from two threads were seen to hang on an H100); each decoder has its
// own decoding states.
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

// One image to decode: a JPEG in host memory, the window of it to decode, and where the
// interleaved 8-bit pixels go on the device.
struct NvjpegJob {
  const uint8_t* data = nullptr;  // the JPEG, in host memory
  size_t size = 0;
  int64_t y = 0, x = 0, h = 0, w = 0;  // the window to decode (the whole image or a part)
  uint8_t* out = nullptr;              // device: h rows of w * 3 bytes, `pitch` apart
  int64_t pitch = 0;
};

// The hardware decoder: the engines decode a batch; used from one thread at a time.
class NvjpegHardwareDecoder {
 public:
  explicit NvjpegHardwareDecoder(int device);  // throws RuntimeError when unavailable
  ~NvjpegHardwareDecoder();
  NvjpegHardwareDecoder(const NvjpegHardwareDecoder&) = delete;
  NvjpegHardwareDecoder& operator=(const NvjpegHardwareDecoder&) = delete;

  using Job = NvjpegJob;
  // Prepares `slots` probes for supports(), one per thread that calls it.
  void reserve_slots(int slots);
  // Whether the engines can decode this stream's window (baseline, one scan, supported
  // subsampling, 8-bit, 3 components...). Parses the stream on the host; threads may call it
  // at once with different slots.
  bool supports(const Job& job, int slot);
  // Decodes every job to interleaved RGB (BGR when `bgr`), enqueued on `stream`, after the
  // stream's earlier work has finished; returns the seconds spent waiting for that. Throws
  // RuntimeError with nvJPEG's status when the batch fails (callers decode it elsewhere).
  double decode(const std::vector<Job>& jobs, bool bgr, StreamHandle stream);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether the CUDA decoders can be used on `device`; otherwise `why` says why not.
bool nvjpeg_cuda_available(int device, std::string* why = nullptr);

// Where the CUDA decoder's calling threads spent their time, summed over its slots: nvJPEG's
// host phase (parsing, and Huffman decoding below the threshold), waiting for the slot's
// previous image, the transfer call and the device call (both queue GPU work, and may wait for
// it inside nvJPEG).
enum NvjpegCudaPhase { kPhaseHost, kPhaseWait, kPhaseTransfer, kPhaseDevice };
struct NvjpegCudaPhases {
  double seconds[4] = {};
};

// The CUDA decoders, for many CPU threads at once: each thread decodes in its own slot (decoding
// states, buffers and a CUDA stream). Images up to `gpu_huffman_threshold` pixels have their
// Huffman decode on the calling thread (nvJPEG's hybrid backend), larger ones on the GPU
// (GPU-hybrid), baseline or progressive; inverse DCT, upsampling and colour conversion always
// run on the GPU. Takes baseline and progressive 8-bit Huffman JPEGs that the hardware may
// refuse.
class NvjpegCudaDecoder {
 public:
  NvjpegCudaDecoder(int device, int slots, int64_t gpu_huffman_threshold);  // throws RuntimeError
  ~NvjpegCudaDecoder();
  NvjpegCudaDecoder(const NvjpegCudaDecoder&) = delete;
  NvjpegCudaDecoder& operator=(const NvjpegCudaDecoder&) = delete;

  int slots() const;
  // Starts a batch: the slots' work is ordered after the work queued on `stream` so far (for
  // instance the allocation of the outputs).
  void begin(StreamHandle stream);
  // Decodes one job on `slot` (one thread per slot at a time) to RGB (BGR when `bgr`): the host
  // part now, the GPU part queued on the slot's stream. Returns false when nvJPEG cannot decode
  // the stream (the caller decodes it elsewhere); GPU work queued before it failed may still
  // write the job's output: mark() the slot all the same. `grew` (optional) says whether the
  // image was larger than any before on its slot's buffers, which nvJPEG then enlarges (this
  // decode's time is no measure of the next ones').
  bool decode(const NvjpegJob& job, bool bgr, int slot, bool* grew = nullptr);
  // One event capturing everything queued so far on these slots (null for none): what uses the
  // decoded pixels, the JPEGs' bytes (read by the GPU with Huffman decoding there) or the
  // outputs' memory waits for it. Slots used since by other images make it wait longer, never
  // shorter.
  std::shared_ptr<CudaEvent> mark(const std::vector<int>& slots);
  // Thread seconds per phase so far (any thread, at any time).
  NvjpegCudaPhases phase_seconds() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
