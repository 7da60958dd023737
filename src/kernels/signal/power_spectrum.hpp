// power_spectrum (as DALI 2.4's CPU kernel): the nfft-point spectrum of every line of a tensor
// along one axis, |X|^2 or |X| for the first nfft / 2 + 1 bins; a line longer than nfft is cut
// to nfft, a shorter one zero-padded.
#pragma once

#include <complex>
#include <cstdint>

#include "stoker/kernels/signal/fft.hpp"

namespace stoker::kernels {

// `in` is (outer, n, inner) and `out` (outer, fft.bins(), inner), both dense; `spectrum` holds
// fft.bins() values (scratch).
inline void power_spectrum_cpu(const float* in, int64_t outer, int64_t n, int64_t inner, int power,
                               RealFft& fft, std::complex<float>* spectrum, float* out) {
  const int64_t bins = fft.bins();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      fft.forward(in + o * n * inner + j, n, inner, spectrum);
      spectrum_from_bins(spectrum, bins, power, out + o * bins * inner + j, inner);
    }
  }
}

}  // namespace stoker::kernels
