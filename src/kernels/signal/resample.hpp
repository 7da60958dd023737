// Audio resampling with a Hann-windowed sinc (DALI's audio_resample and decoders.audio's
// sample_rate). The window is a lookup table read with linear interpolation; an output sample at
// input position x sums in[i] * window(i - x) over the 2 * lobes inputs around x. Every step is
// DALI 2.4's CPU kernel's in the same float operations and order (its SSE2 four-lane loop
// included: lanes summed as (0 + 2) + (1 + 3)), so that the outputs are the same bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

// DALI's quality (0..100) -> the window's half-width in input samples: 3 at 0, 16 at 50, 64 at
// 100; its table has 64 entries per lobe (+1).
inline int resample_lobes(double quality) {
  return int(std::round(0.007 * quality * quality - 0.09 * quality + 3));
}
inline int resample_lookup_size(int lobes) { return lobes * 64 + 1; }

// ceil(in_length * out_rate / in_rate), in double (DALI's resampled_length): as a double, for
// checking a ratio's result before it is taken as a length, and as the length (which must fit).
inline double resampled_frames(int64_t in_length, double in_rate, double out_rate) {
  return std::ceil(double(in_length) * out_rate / in_rate);
}
inline int64_t resampled_length(int64_t in_length, double in_rate, double out_rate) {
  return int64_t(resampled_frames(in_length, in_rate, out_rate));
}

struct ResampleWindow {
  float scale = 1, center = 1;  // table index = x * scale + center
  int lobes = 0;
  // coeffs values, a zero before them (index 0) and zeros after (whole four-lane reads stay in).
  std::vector<float> lookup;

  float operator()(float x) const {
    const float fi = x * scale + center;
    const float floori = std::floor(fi);
    const float di = fi - floori;
    const int i = int(floori);
    return lookup[size_t(i)] + di * (lookup[size_t(i) + 1] - lookup[size_t(i)]);
  }
};

// sin(pi x) / (pi x) in float, as DALI's sinc(float): the product with pi rounded to float.
inline float resample_sinc(float x) {
  x = float(double(x) * M_PI);
  if (std::abs(x) < 1e-5f) return 1.0f - x * x * (1.0f / 6);
  return std::sin(x) / x;
}

// The table of `coeffs` samples of sinc(x) * Hann over x in [-lobes, lobes].
inline ResampleWindow make_resample_window(int lobes, int coeffs) {
  ResampleWindow w;
  const float scale = 2.0f * float(lobes) / float(coeffs - 1);
  const float scale_envelope = 2.0f / float(coeffs);
  w.lobes = lobes;
  w.lookup.assign(size_t(coeffs) + 5, 0.0f);
  const int center = int(float(coeffs - 1) * 0.5f);
  for (int i = 0; i < coeffs; i++) {
    const float x = float(i - center) * scale;
    const float y = float(i - center) * scale_envelope;
    const double hann = 0.5 * (1 + std::cos(double(y) * M_PI));
    w.lookup[size_t(i) + 1] = float(double(resample_sinc(x)) * hann);
  }
  w.center = float(center + 1);
  w.scale = 1 / scale;
  return w;
}

// A normalised float (-1..1; 0..1 for unsigned types) as Out: scaled by Out's maximum and
// rounded half away from zero, saturated (DALI's ConvertSatNorm); floats pass unchanged.
template <typename Out>
Out from_norm_float(float v) {
  if constexpr (std::is_floating_point_v<Out>) {
    return v;
  } else {
    return cast_value<Out>(std::round(v * float(std::numeric_limits<Out>::max())));
  }
}

// An integer as a normalised float: v * (1 / max), the reciprocal rounded to float first
// (DALI's ConvertSatNorm<float>); floats pass unchanged.
template <typename In>
float to_norm_float(In v) {
  if constexpr (std::is_floating_point_v<In>) {
    return float(v);
  } else {
    return float(v) * (1.0f / float(std::numeric_limits<In>::max()));
  }
}

// A sample value as audio_resample filters it: to_norm_float, then moved to 0..1 when the
// output type is unsigned and v's type signed (floats too), to -1..1 when the output is signed
// and v's type unsigned (so that 0 maps to the middle of the unsigned range). resample_gpu.cu
// repeats these float steps.
template <typename In>
float resample_input(In v, bool out_unsigned) {
  const float f = to_norm_float(v);
  if (out_unsigned && std::is_signed_v<In>) {
    const float shifted = f + 1.0f;
    return shifted * 0.5f;
  }
  if (!out_unsigned && std::is_unsigned_v<In>) {
    const float doubled = f * 2.0f;
    return doubled - 1.0f;
  }
  return f;
}

namespace resample_detail {

#ifdef __SSE2__
inline __m128 window4(const ResampleWindow& w, __m128 x) {
  const __m128 fi = _mm_add_ps(_mm_mul_ps(x, _mm_set1_ps(w.scale)), _mm_set1_ps(w.center));
  const __m128i i = _mm_cvttps_epi32(fi);  // fi > 0 here: truncation is the floor
  const __m128 di = _mm_sub_ps(fi, _mm_cvtepi32_ps(i));
  alignas(16) int idx[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(idx), i);
  const float* t = w.lookup.data();
  const __m128 curr = _mm_setr_ps(t[idx[0]], t[idx[1]], t[idx[2]], t[idx[3]]);
  const __m128 next = _mm_setr_ps(t[idx[0] + 1], t[idx[1] + 1], t[idx[2] + 1], t[idx[3] + 1]);
  return _mm_add_ps(curr, _mm_mul_ps(di, _mm_sub_ps(next, curr)));
}

// Sums in[i] * window(i - pos) four at a time from i = *i_ref while i + 3 < i1; leaves *i_ref at
// the first input not summed.
inline float sum4(const ResampleWindow& w, int* i_ref, float pos, int i1, const float* in) {
  int i = *i_ref;
  __m128 f4 = _mm_setzero_ps();
  __m128 x4 =
      _mm_setr_ps(float(i) - pos, float(i + 1) - pos, float(i + 2) - pos, float(i + 3) - pos);
  for (; i + 3 < i1; i += 4) {
    f4 = _mm_add_ps(f4, _mm_mul_ps(_mm_loadu_ps(in + i), window4(w, x4)));
    x4 = _mm_add_ps(x4, _mm_set1_ps(4));
  }
  *i_ref = i;
  f4 = _mm_add_ps(f4, _mm_shuffle_ps(f4, f4, _MM_SHUFFLE(1, 0, 3, 2)));
  f4 = _mm_add_ps(f4, _mm_shuffle_ps(f4, f4, _MM_SHUFFLE(0, 1, 0, 1)));
  return _mm_cvtss_f32(f4);
}
#else
// The same four lanes in scalar code (no SSE2: each lane's operations as the vector's).
inline float sum4(const ResampleWindow& w, int* i_ref, float pos, int i1, const float* in) {
  int i = *i_ref;
  float f[4] = {0, 0, 0, 0};
  float x[4] = {float(i) - pos, float(i + 1) - pos, float(i + 2) - pos, float(i + 3) - pos};
  for (; i + 3 < i1; i += 4) {
    for (int l = 0; l < 4; ++l) {
      const float fi = x[l] * w.scale + w.center;
      const int k = int(fi);
      const float di = fi - float(k);
      const float c = w.lookup[size_t(k)];
      const float prod = in[i + l] * (c + di * (w.lookup[size_t(k) + 1] - c));
      f[l] = f[l] + prod;
      x[l] = x[l] + 4;
    }
  }
  *i_ref = i;
  return (f[0] + f[2]) + (f[1] + f[3]);
}
#endif

}  // namespace resample_detail

// Resamples `n_in` frames of `channels` interleaved float channels at in_rate into out[0,
// out_length) frames at out_rate, converted with from_norm_float<Out>. Inputs outside [0, n_in)
// count as zero. n_in must be below 2^31 - lobes (positions are ints, as DALI's).
template <typename Out>
void resample_cpu(Out* out, int64_t out_length, double out_rate, const float* in, int64_t n_in,
                  double in_rate, int channels, const ResampleWindow& w) {
  constexpr int64_t kBlock = 256;  // positions restart from a double every block
  constexpr int kChunk = 16;       // channels accumulated at once (more: the window is re-read)
  const double scale = in_rate / out_rate;
  const float fscale = float(scale);
  for (int64_t out_block = 0; out_block < out_length; out_block += kBlock) {
    const int64_t block_end = std::min(out_block + kBlock, out_length);
    const double in_block_f = double(out_block) * scale;
    const int64_t in_block_i = int64_t(std::floor(in_block_f));
    float pos = float(in_block_f - double(in_block_i));
    for (int64_t o = out_block; o < block_end; o++, pos += fscale) {
      const int xc = int(std::ceil(pos));
      int i0 = xc - w.lobes, i1 = xc + w.lobes;
      if (i0 + in_block_i < 0) i0 = int(-in_block_i);
      if (i1 + in_block_i > n_in) i1 = int(n_in - in_block_i);
      if (channels == 1) {
        const float* block = in + in_block_i;
        int i = i0;
        float f = resample_detail::sum4(w, &i, pos, i1, block);
        float x = float(i) - pos;
        for (; i < i1; i++, x++) f += block[i] * w(x);
        out[o] = from_norm_float<Out>(f);
        continue;
      }
      // Each channel's products summed in input order, as DALI's multi-channel loop.
      for (int c0 = 0; c0 < channels; c0 += kChunk) {
        const int nc = std::min(kChunk, channels - c0);
        float acc[kChunk] = {};
        float x = float(i0) - pos;
        for (int i = i0; i < i1; i++, x++) {
          const float wx = w(x);
          const float* frame = in + (in_block_i + i) * channels + c0;
          for (int c = 0; c < nc; c++) acc[c] += frame[c] * wx;
        }
        for (int c = 0; c < nc; c++) out[o * channels + c0 + c] = from_norm_float<Out>(acc[c]);
      }
    }
  }
}

// Mixes `frames` frames of `channels` interleaved float channels down to one: the channels'
// mean as DALI computes it (each times 1 / channels in float, summed in order), converted with
// from_norm_float<Out>.
template <typename Out>
void downmix_cpu(Out* out, const float* in, int64_t frames, int channels) {
  const float weight = 1.0f / float(channels);
  for (int64_t o = 0; o < frames; o++) {
    const float* frame = in + o * channels;
    float sum = frame[0] * weight;
    for (int c = 1; c < channels; c++) sum += frame[c] * weight;
    out[o] = from_norm_float<Out>(sum);
  }
}

}  // namespace stoker::kernels
