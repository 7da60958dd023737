// The short-time Fourier transform of spectrogram (as DALI 2.4's CPU kernel): windows of
// `window_length` samples every `window_step`, multiplied by the window function, each one's
// nfft-point spectrum (the window zero-padded to nfft) as a column ("ft") or row ("tf").
//
// Centred windows (center_windows) start window_length / 2 before their multiple of the step,
// the signal mirrored (reflect_padding: about its end samples, which are not repeated) or
// zero outside; there are length / step + 1 of them. Otherwise windows start at the multiples
// and there are (length - window_length) / step + 1, divided as C++ divides (towards zero, so
// that a signal a little shorter than the window still makes one, zero-padded, as DALI's).
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/signal/fft.hpp"

namespace stoker::kernels {

// DALI's Hann window: 0.5 (1 - cos(2 pi (t + 0.5) / n)), symmetric about n / 2.
inline void hann_window(float* out, int64_t n) {
  const double a = 2 * M_PI / double(n);
  for (int64_t t = 0; t < n; ++t) out[t] = float(0.5 * (1.0 - std::cos(a * (double(t) + 0.5))));
}

enum class StftPadding { kNone, kZero, kReflect };

struct Stft {
  int64_t window_length = 512;
  int64_t window_step = 256;
  StftPadding padding = StftPadding::kReflect;  // kNone: windows not centred
  int power = 2;                                // 2: |X|^2, 1: |X|
  bool time_major = false;                      // "tf" (windows are rows) or "ft"
};

inline int64_t stft_windows(const Stft& s, int64_t length) {
  if (s.padding != StftPadding::kNone) return length / s.window_step + 1;
  return (length - s.window_length) / s.window_step + 1;  // towards zero, as DALI
}

// Index i of a signal of n samples mirrored about its ends (..., 2, 1, 0, 1, 2, ..., n-1, n-2,
// ...); a one-sample signal repeats. Also the GPU kernel's (stft_gpu.cu).
STOKER_HOST_DEVICE inline int64_t reflect_101(int64_t i, int64_t n) {
  if (n <= 1) return 0;
  const int64_t period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// Window w of the signal times the window function, into frame[0, window_length).
inline void stft_frame(const Stft& s, const float* signal, int64_t n, const float* window,
                       int64_t w, float* frame) {
  const int64_t centre = s.padding == StftPadding::kNone ? 0 : s.window_length / 2;
  const int64_t start = w * s.window_step - centre;
  if (start >= 0 && start + s.window_length <= n) {  // inside the signal: most windows
    for (int64_t t = 0; t < s.window_length; ++t) frame[t] = window[t] * signal[start + t];
    return;
  }
  for (int64_t t = 0; t < s.window_length; ++t) {
    int64_t i = start + t;
    if (s.padding == StftPadding::kReflect) i = reflect_101(i, n);
    frame[t] = i >= 0 && i < n ? window[t] * signal[i] : 0.f;
  }
}

// The spectrogram of `signal` (n samples, stft_windows(s, n) > 0) into `out`: (bins, windows)
// or, time-major, (windows, bins), bins = fft.bins(). `frame` holds window_length floats and
// `spectrum` fft.bins() values (scratch).
inline void stft_cpu(const Stft& s, const float* signal, int64_t n, const float* window,
                     RealFft& fft, float* frame, std::complex<float>* spectrum, float* out) {
  const int64_t windows = stft_windows(s, n), bins = fft.bins();
  for (int64_t w = 0; w < windows; ++w) {
    stft_frame(s, signal, n, window, w, frame);
    fft.forward(frame, s.window_length, 1, spectrum);
    if (s.time_major) {
      spectrum_from_bins(spectrum, bins, s.power, out + w * bins, 1);
    } else {
      spectrum_from_bins(spectrum, bins, s.power, out + w, windows);
    }
  }
}

}  // namespace stoker::kernels
