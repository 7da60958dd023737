// The noise operators' work on one sample (noise.gaussian, noise.salt_and_pepper, noise.shot), in
// work items that the CPU kernel (noise_cpu.cpp) runs in a loop and the GPU one (noise_gpu.cu)
// one per thread: every draw is a pure function of the sample's key and the element's index, so
// the two backends give the same values bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/random/noise_math.hpp"

namespace stoker::kernels {

enum class NoiseKind : int32_t { kGaussian, kSaltAndPepper, kShot };

// One sample. Its elements form `units` draw units of `channels` elements each, `inner` apart:
// unit u holds elements (u / inner) * channels * inner + u % inner + c * inner, c < channels.
// Gaussian and shot noise draw per element (channels = inner = 1), salt-and-pepper per pixel
// unless per_channel.
struct NoiseSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t units = 0;
  int64_t channels = 1, inner = 1;
  uint32_t key0 = 0, key1 = 0;  // drawn from the sample's random stream
  // gaussian: mean, stddev; salt-and-pepper: prob, prob * salt_vs_pepper; shot: factor, 1/factor
  float p0 = 0, p1 = 0;
  uint64_t salt = 0, pepper = 0;  // salt-and-pepper: the values, as the output type's bytes
};

// The output types: DALI 2.4's (u8, i8, u16, i16, u32, i32, u64, i64, f32).
inline bool noise_supports(DType d) {
  return d == DType::kU8 || d == DType::kI8 || d == DType::kU16 || d == DType::kI16 ||
         d == DType::kU32 || d == DType::kI32 || d == DType::kU64 || d == DType::kI64 ||
         d == DType::kF32;
}

// Work items of a sample: element pairs (one Box-Muller block each), groups of four units (one
// block of four uniforms) or elements (a Poisson draw each).
STOKER_HOST_DEVICE inline int64_t noise_work_items(NoiseKind kind, int64_t units) {
  return kind == NoiseKind::kGaussian        ? (units + 1) / 2
         : kind == NoiseKind::kSaltAndPepper ? (units + 3) / 4
                                             : units;
}

// v as T: floats as they are; integers rounded half away from zero and saturated (NaN: 0), as
// core/dtype.hpp's convert_sat and cast_value.
template <typename T, typename F>
STOKER_HOST_DEVICE inline T noise_store(F v) {
  if constexpr (std::is_floating_point_v<T>) {
    return T(v);
  } else {
    constexpr int kBits = int(8 * sizeof(T));
    constexpr bool kSigned = std::is_signed_v<T>;
    constexpr uint64_t kMax = kSigned ? (uint64_t(1) << (kBits - 1)) - 1
                                      : (kBits == 64 ? ~uint64_t(0) : (uint64_t(1) << kBits) - 1);
    constexpr int64_t kMin = kSigned ? -int64_t(kMax) - 1 : 0;
    if (!(v == v)) return T(0);
#ifdef __CUDA_ARCH__
    const F r = round(v);
#else
    const F r = std::round(v);
#endif
    if (r <= F(kMin)) return T(kMin);
    if (r >= F(kMax)) return T(kMax);  // F(kMax) may round up to 2^bits: then max too
    return T(r);
  }
}

// Gaussian: elements 2p and 2p + 1 (when there) get mean + stddev z added, in float for the
// small types and float32 (DALI's float distribution), in double for 32- and 64-bit integers.
template <typename T>
STOKER_HOST_DEVICE inline void noise_gaussian_item(const NoiseSample& s, int64_t p) {
  double z[2];
  noise_math::normal_pair(noise_math::block(s.key0, s.key1, uint64_t(p), 0), &z[0], &z[1]);
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  for (int j = 0; j < 2; ++j) {
    const int64_t e = 2 * p + j;
    if (e >= s.units) break;
    const double n = noise_math::madd(double(s.p1), z[j], double(s.p0));
    if constexpr (std::is_floating_point_v<T> || sizeof(T) <= 2) {
      out[e] = noise_store<T>(add_rn(float(in[e]), float(n)));
    } else {
      out[e] = noise_store<T>(add_rn(double(in[e]), n));
    }
  }
}

// Salt-and-pepper: units 4g .. 4g + 3, one uniform u each: u < prob corrupts the unit (all its
// channels), to salt when u < prob * salt_vs_pepper, else to pepper.
template <typename T>
STOKER_HOST_DEVICE inline void noise_salt_and_pepper_item(const NoiseSample& s, int64_t g) {
  const noise_math::Block b = noise_math::block(s.key0, s.key1, uint64_t(g), 0);
  T salt, pepper;
  memcpy(&salt, &s.salt, sizeof(T));
  memcpy(&pepper, &s.pepper, sizeof(T));
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  for (int j = 0; j < 4; ++j) {
    const int64_t u = 4 * g + j;
    if (u >= s.units) break;
    const float x = noise_math::uniform24(b.r[j]);
    const int64_t first = (u / s.inner) * s.channels * s.inner + u % s.inner;
    for (int64_t c = 0; c < s.channels; ++c) {
      const int64_t e = first + c * s.inner;
      out[e] = x < s.p0 ? (x < s.p1 ? salt : pepper) : in[e];
    }
  }
}

// Shot: element e becomes Poisson(max(0, in / factor)) * factor, in float as DALI; a factor of 0
// gives 0 (DALI 2.4's result: its draw is the input, times 0).
template <typename T>
STOKER_HOST_DEVICE inline void noise_shot_item(const NoiseSample& s, int64_t e) {
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  if (s.p0 == 0.0f) {
    out[e] = noise_store<T>(0.0f);
    return;
  }
  float lambda = mul_rn(float(in[e]), s.p1);
  lambda = lambda > 0.0f ? lambda : 0.0f;  // NaN too
  const double k = noise_math::poisson(double(lambda), s.key0, s.key1, uint64_t(e));
  out[e] = noise_store<T>(mul_rn(float(k), s.p0));
}

template <typename T>
STOKER_HOST_DEVICE inline void noise_item(NoiseKind kind, const NoiseSample& s, int64_t item) {
  if (kind == NoiseKind::kGaussian) {
    noise_gaussian_item<T>(s, item);
  } else if (kind == NoiseKind::kSaltAndPepper) {
    noise_salt_and_pepper_item<T>(s, item);
  } else {
    noise_shot_item<T>(s, item);
  }
}

// The CPU kernel: every work item of sample `s`, whose elements are `dtype` (noise_supports).
void noise_cpu(NoiseKind kind, const NoiseSample& s, DType dtype);

}  // namespace stoker::kernels
