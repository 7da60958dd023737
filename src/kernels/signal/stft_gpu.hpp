// spectrogram on the GPU: stft.hpp's stft_cpu for a ragged batch. Every window of every sample
// is cut and weighted into a row of nfft floats (stft_frame's products, zero-padded: one
// launch), the rows go through cuFFT's batched real-to-complex FFT (CufftR2c), and the bins
// become |X|^2 or |X| in the output's layout (spectrum_from_bins' float steps: one launch). Only
// the FFT differs from the CPU's (cuFFT against KissFFT, both in float): the results agree
// within float rounding relative to each sample's largest bin.
//
// cuFFT is opened at run time (as nvJPEG is, codecs/nvjpeg): neither the build nor the wheel
// link it; only its header is needed to build (src/kernels/CMakeLists.txt sets
// STOKER_HAVE_CUFFT on stft_gpu_cufft.cpp when it finds cufft.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

struct StftGpuSample {
  const float* signal = nullptr;
  int64_t length = 0;     // the signal's samples
  int64_t windows = 0;    // stft_windows(length)
  int64_t first_row = 0;  // its first window's row in the frames and spectra
  float* out = nullptr;   // (bins, windows), or (windows, bins) time-major
};

struct StftGpuParams {
  int64_t window_length = 0, window_step = 0, nfft = 0;
  int32_t padding = 0;  // StftPadding: 0 none, 1 zeros, 2 reflection
  int32_t power = 2;
  int32_t time_major = 0;
};

// Rows first_row... of `frames` (rows x nfft floats): each sample's windows times `window`
// (window_length floats, device), zero-padded to nfft. `samples`: a device array of n (<=
// 65535); max_windows: the most windows of a sample. Returns a cudaError_t.
int stft_frames_gpu(const StftGpuSample* samples, int n, int64_t max_windows,
                    const StftGpuParams& p, const float* window, float* frames,
                    StreamHandle stream);

// Each sample's output from its rows of `spectra` (rows x (nfft / 2 + 1) complex values, as
// interleaved float pairs). Returns a cudaError_t.
int stft_spectrum_gpu(const StftGpuSample* samples, int n, int64_t max_windows,
                      const StftGpuParams& p, const float* spectra, StreamHandle stream);

// Why cuFFT cannot be used ("" when it can): this build has no CUDA or no cufft.h, the library
// was not found (or STOKER_DISABLE_CUFFT is set), or it lacks a function.
std::string cufft_unavailable();

// Batched real-to-complex FFTs of nfft points on the device that is current when the plans are
// made: nfft real floats per row in, nfft / 2 + 1 complex values per row out. The plans are kept
// (one per power-of-two batch, so that a batch of any size takes a few of them and no plan is
// made once the sizes have been seen); their work areas are the caller's (device pool memory).
// One thread at a time.
class CufftR2c {
 public:
  // Throws RuntimeError when cuFFT cannot be used (cufft_unavailable()).
  explicit CufftR2c(int64_t nfft);
  ~CufftR2c();
  CufftR2c(const CufftR2c&) = delete;
  CufftR2c& operator=(const CufftR2c&) = delete;

  // The work area forward() needs for `rows` rows (making the plans it will use).
  size_t work_bytes(int64_t rows);
  // rows FFTs from `in` (rows x nfft floats) into `out` (rows x (nfft / 2 + 1) x 2 floats),
  // queued on `stream`; `work`: work_bytes(rows) bytes of device memory.
  void forward(const float* in, float* out, int64_t rows, void* work, StreamHandle stream);

 private:
  struct Plan {
    int handle = 0;  // a cufftHandle
    size_t work = 0;
  };
  const Plan& plan(int64_t batch);
  // The largest power-of-two batch <= rows, capped so that a plan's rows stay a bounded size.
  int64_t batch_for(int64_t rows) const;

  int64_t nfft_;
  std::map<int64_t, Plan> plans_;
};

}  // namespace stoker::kernels
