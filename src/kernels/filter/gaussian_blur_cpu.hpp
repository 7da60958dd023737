// Separable Gaussian blur of an H x W x C image (channels last) on the CPU, as DALI (and
// OpenCV) define it: a window of 2r + 1 taps, r = ceil(3 sigma) when only sigma is given; when
// only the window is given, sigma = (r - 1) * 0.3 + 0.8; weights exp(-k^2 / (2 sigma^2))
// normalised to sum 1; borders mirrored without repeating the edge (reflect-101:
// ... c b | a b c ... | b a ...). Computed in float, then rounded half away from zero and
// saturated for integer outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/core/error.hpp"
#include "stoker/kernels/filter/border.hpp"

namespace stoker::kernels {

// Taps of a 1-D Gaussian window; sigma 0 and window 0 together give the identity ([1]).
inline std::vector<float> gaussian_window(double sigma, int64_t window) {
  STOKER_ENFORCE(sigma >= 0 && window >= 0 && (window == 0 || window % 2 == 1), ValueError,
                 "gaussian blur: sigma must be >= 0 and window_size odd (or 0), got sigma ", sigma,
                 " and window_size ", window);
  if (window == 0) window = 2 * int64_t(std::ceil(3 * sigma)) + 1;
  const int64_t r = window / 2;
  if (sigma == 0) sigma = (double(r) - 1) * 0.3 + 0.8;
  std::vector<double> w(static_cast<size_t>(window));
  double sum = 0;
  for (int64_t k = -r; k <= r; ++k)
    sum += w[size_t(k + r)] = r == 0 ? 1.0 : std::exp(-double(k * k) / (2 * sigma * sigma));
  std::vector<float> out(w.size());
  for (size_t k = 0; k < w.size(); ++k) out[k] = float(w[k] / sum);
  return out;
}

template <typename Out, typename In>
void gaussian_blur_cpu(const In* in, int64_t h, int64_t w, int64_t c, const std::vector<float>& ky,
                       const std::vector<float>& kx, Out* out, std::vector<float>& scratch) {
  if (h == 0 || w == 0 || c == 0) return;  // nothing to blur (and nothing to reflect into)
  const int64_t ry = int64_t(ky.size()) / 2, rx = int64_t(kx.size()) / 2;
  scratch.assign(size_t(h * w * c), 0.f);
  for (int64_t y = 0; y < h; ++y)  // horizontal pass into float scratch
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = -rx; k <= rx; ++k) {
        const float wk = kx[size_t(k + rx)];
        const In* s = in + (y * w + reflect101(x + k, w)) * c;
        float* d = &scratch[size_t((y * w + x) * c)];
        for (int64_t ch = 0; ch < c; ++ch) d[ch] += wk * to_float(s[ch]);
      }
  std::vector<float> acc(size_t(w * c));
  for (int64_t y = 0; y < h; ++y) {  // vertical pass
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int64_t k = -ry; k <= ry; ++k) {
      const float wk = ky[size_t(k + ry)];
      const float* s = &scratch[size_t(reflect101(y + k, h) * w * c)];
      for (int64_t i = 0; i < w * c; ++i) acc[size_t(i)] += wk * s[i];
    }
    for (int64_t i = 0; i < w * c; ++i) out[y * w * c + i] = convert_sat<Out>(acc[size_t(i)]);
  }
}

}  // namespace stoker::kernels
