// fft.hpp's RealFft on KissFFT. STOKER_HAVE_KISSFFT is set on this file alone by
// src/kernels/CMakeLists.txt when libkissfft-float is found, so that its presence changes no
// other file's flags.
#include "stoker/kernels/signal/fft.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <vector>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_KISSFFT
#include <kiss_fft.h>
#include <kiss_fftr.h>
#endif

namespace stoker::kernels {

bool fft_available() {
#ifdef STOKER_HAVE_KISSFFT
  return true;
#else
  return false;
#endif
}

#ifdef STOKER_HAVE_KISSFFT
namespace {

// Prime factors above this go through Bluestein (KissFFT's generic butterfly costs n * p).
constexpr int64_t kMaxDirectPrime = 61;

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) largest = p, n /= p;
  }
  return std::max(largest, n);
}

// A KissFFT plan that frees itself.
template <typename Cfg>
struct Plan {
  Cfg cfg = nullptr;
  void reset(Cfg c) {
    if (!c) throw std::bad_alloc();
    cfg = c;
  }
  ~Plan() { kiss_fft_free(cfg); }
};

}  // namespace

struct RealFft::Impl {
  enum class Kind { kReal, kComplex, kBluestein } kind;
  Plan<kiss_fftr_cfg> real;        // kReal: even nfft, smooth nfft / 2
  Plan<kiss_fft_cfg> forward;      // kComplex: nfft; kBluestein: M
  Plan<kiss_fft_cfg> inverse;      // kBluestein: M
  std::vector<float> samples;      // kReal: the nfft inputs
  std::vector<kiss_fft_cpx> a, b;  // kComplex: inputs, outputs; kBluestein: work, FFT(chirp*)
  std::vector<kiss_fft_cpx> c;     // kBluestein: the convolution
  std::vector<std::complex<float>> chirp;  // kBluestein: e^(-i pi t^2 / nfft)
};

RealFft::RealFft(int64_t nfft) : nfft_(nfft), impl_(std::make_unique<Impl>()) {
  STOKER_ASSERT(nfft >= 1 && nfft <= kMaxFftSize, "RealFft of ", nfft, " points");
  Impl& s = *impl_;
  const int n = int(nfft);
  if (n % 2 == 0 && largest_prime_factor(n / 2) <= kMaxDirectPrime) {
    s.kind = Impl::Kind::kReal;
    s.real.reset(kiss_fftr_alloc(n, 0, nullptr, nullptr));
    s.samples.resize(static_cast<size_t>(n));
    s.a.resize(size_t(n / 2 + 1));
  } else if (largest_prime_factor(n) <= kMaxDirectPrime) {
    s.kind = Impl::Kind::kComplex;
    s.forward.reset(kiss_fft_alloc(n, 0, nullptr, nullptr));
    s.a.resize(static_cast<size_t>(n));
    s.b.resize(static_cast<size_t>(n));
  } else {
    s.kind = Impl::Kind::kBluestein;
    int m = 1;
    while (m < 2 * n - 1) m *= 2;
    s.forward.reset(kiss_fft_alloc(m, 0, nullptr, nullptr));
    s.inverse.reset(kiss_fft_alloc(m, 1, nullptr, nullptr));
    s.chirp.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) {
      // t^2 mod 2n keeps the phase exact for large t.
      const double phase = M_PI * double((t * t) % (2 * int64_t(n))) / double(n);
      s.chirp[size_t(t)] = {float(std::cos(phase)), float(-std::sin(phase))};
    }
    // b: the conjugate chirp at offsets -(n-1) .. n-1, circularly; FFT(b) is kept.
    std::vector<kiss_fft_cpx> chirp_conj(size_t(m), kiss_fft_cpx{0.f, 0.f});
    for (int t = 0; t < n; ++t) {
      const kiss_fft_cpx v{s.chirp[size_t(t)].real(), -s.chirp[size_t(t)].imag()};
      chirp_conj[size_t(t)] = v;
      if (t > 0) chirp_conj[size_t(m - t)] = v;
    }
    s.b.resize(static_cast<size_t>(m));
    kiss_fft(s.forward.cfg, chirp_conj.data(), s.b.data());
    s.a.resize(static_cast<size_t>(m));
    s.c.resize(static_cast<size_t>(m));
  }
}

RealFft::~RealFft() = default;

void RealFft::forward(const float* in, int64_t n, int64_t stride, std::complex<float>* out) {
  Impl& s = *impl_;
  const int64_t used = std::min(n, nfft_);
  const int64_t nbins = bins();
  switch (s.kind) {
    case Impl::Kind::kReal: {
      for (int64_t t = 0; t < used; ++t) s.samples[size_t(t)] = in[t * stride];
      std::fill(s.samples.begin() + used, s.samples.end(), 0.f);
      kiss_fftr(s.real.cfg, s.samples.data(), s.a.data());
      for (int64_t k = 0; k < nbins; ++k) out[k] = {s.a[size_t(k)].r, s.a[size_t(k)].i};
      return;
    }
    case Impl::Kind::kComplex: {
      for (int64_t t = 0; t < used; ++t) s.a[size_t(t)] = {in[t * stride], 0.f};
      std::fill(s.a.begin() + used, s.a.end(), kiss_fft_cpx{0.f, 0.f});
      kiss_fft(s.forward.cfg, s.a.data(), s.b.data());
      for (int64_t k = 0; k < nbins; ++k) out[k] = {s.b[size_t(k)].r, s.b[size_t(k)].i};
      return;
    }
    case Impl::Kind::kBluestein: {
      // X_k = chirp_k * sum_t (x_t chirp_t) conj(chirp_(k-t)): a convolution through FFT(b).
      for (int64_t t = 0; t < used; ++t) {
        const std::complex<float> v = in[t * stride] * s.chirp[size_t(t)];
        s.a[size_t(t)] = {v.real(), v.imag()};
      }
      std::fill(s.a.begin() + used, s.a.end(), kiss_fft_cpx{0.f, 0.f});
      kiss_fft(s.forward.cfg, s.a.data(), s.c.data());
      for (size_t k = 0; k < s.c.size(); ++k) {
        const std::complex<float> v =
            std::complex<float>(s.c[k].r, s.c[k].i) * std::complex<float>(s.b[k].r, s.b[k].i);
        s.c[k] = {v.real(), v.imag()};
      }
      kiss_fft(s.inverse.cfg, s.c.data(), s.a.data());
      const float scale = 1.f / float(s.a.size());
      for (int64_t k = 0; k < nbins; ++k) {
        out[k] =
            std::complex<float>(s.a[size_t(k)].r, s.a[size_t(k)].i) * s.chirp[size_t(k)] * scale;
      }
      return;
    }
  }
}

#else  // no KissFFT in this build

struct RealFft::Impl {};

RealFft::RealFft(int64_t nfft) : nfft_(nfft) {
  throw RuntimeError(
      "this stoker was built without KissFFT (Debian's libkissfft-dev): the spectral operators "
      "that take an FFT (spectrogram, power_spectrum) are not available");
}

RealFft::~RealFft() = default;

void RealFft::forward(const float*, int64_t, int64_t, std::complex<float>*) {}

#endif

}  // namespace stoker::kernels
