// Real-input FFTs of any size for the spectral operators (spectrogram, power_spectrum), on
// KissFFT (Debian's libkissfft-dev, float). KissFFT is optional at build time: a build without
// it still builds and loads, fft_available() says so and RealFft's constructor throws.
//
// KissFFT factors the size and runs a generic O(p) butterfly for every prime factor p above 5,
// so a size with a large prime factor (DALI takes any nfft: 100003, or 2^31 - 1) would take
// O(n^2). Such sizes go through Bluestein's chirp-z transform instead: the DFT as a circular
// convolution of a power-of-two size M >= 2n - 1, three FFTs of M points.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>

namespace stoker::kernels {

// Whether this build has KissFFT.
bool fft_available();

// The largest FFT the spectral operators plan (2^20 points, far past audio's 512 to 65536): a
// plan's scratch is then at most ~100 MiB (Bluestein's, of 2^21-point buffers) and an FFT takes
// a fraction of a second. DALI allocates whatever nfft asks (bad_alloc around 2^30).
inline constexpr int64_t kMaxFftSize = int64_t(1) << 20;

// The first nfft / 2 + 1 bins of the DFT of nfft real values (the input zero-padded or cut to
// nfft). A plan and its work buffers: one per thread (forward() writes the buffers).
class RealFft {
 public:
  // Throws RuntimeError when this build has no KissFFT, std::bad_alloc when memory runs out.
  // 1 <= nfft <= kMaxFftSize (the operators check it first).
  explicit RealFft(int64_t nfft);
  ~RealFft();
  RealFft(const RealFft&) = delete;
  RealFft& operator=(const RealFft&) = delete;

  int64_t size() const { return nfft_; }
  int64_t bins() const { return nfft_ / 2 + 1; }
  // out[k], k < bins(): sum_t x[t] e^(-2 pi i k t / nfft), x the first min(n, nfft) values of
  // `in` (read with stride `stride`) followed by zeros.
  void forward(const float* in, int64_t n, int64_t stride, std::complex<float>* out);

 private:
  struct Impl;
  int64_t nfft_;
  std::unique_ptr<Impl> impl_;
};

// |X|^2 (power 2) or |X| (power 1) of `bins` values, written with stride `stride`.
inline void spectrum_from_bins(const std::complex<float>* bins, int64_t n, int power, float* out,
                               int64_t stride) {
  for (int64_t k = 0; k < n; ++k) {
    const float re = bins[k].real(), im = bins[k].imag();
    const float p = re * re + im * im;
    out[k * stride] = power == 2 ? p : std::sqrt(p);
  }
}

}  // namespace stoker::kernels
