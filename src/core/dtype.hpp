// Element types (DType), the 16-bit float storage types, conversions, and visit_dtype: the one
// helper for dispatching on a runtime dtype.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "stoker/core/error.hpp"

namespace stoker {

enum class DType : uint8_t {
  kBool,
  kU8,
  kU16,
  kU32,
  kU64,
  kI8,
  kI16,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
};
inline constexpr int kNumDTypes = 13;

// IEEE binary16, stored as bits; converts with round-to-nearest-even.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f);
  explicit operator float() const;
  static float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

// bfloat16 (the top half of a binary32), round-to-nearest-even.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f);
  explicit operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }
};

uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
// float_to_half_bits over n values: the CPU's F16C conversion (8 at a time, the same RNE
// results) where it has one, else the scalar routine.
void floats_to_halves(const float* src, float16* dst, size_t n);
inline float16::float16(float f) : bits(float_to_half_bits(f)) {}
inline float16::operator float() const { return half_bits_to_float(bits); }

template <typename T>
struct DTypeOf;
#define STOKER_DTYPE_OF(T, D)                \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::D; \
  }
STOKER_DTYPE_OF(bool, kBool);
STOKER_DTYPE_OF(uint8_t, kU8);
STOKER_DTYPE_OF(uint16_t, kU16);
STOKER_DTYPE_OF(uint32_t, kU32);
STOKER_DTYPE_OF(uint64_t, kU64);
STOKER_DTYPE_OF(int8_t, kI8);
STOKER_DTYPE_OF(int16_t, kI16);
STOKER_DTYPE_OF(int32_t, kI32);
STOKER_DTYPE_OF(int64_t, kI64);
STOKER_DTYPE_OF(float16, kF16);
STOKER_DTYPE_OF(bfloat16, kBF16);
STOKER_DTYPE_OF(float, kF32);
STOKER_DTYPE_OF(double, kF64);
#undef STOKER_DTYPE_OF
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

size_t dtype_size(DType d);
// Canonical names: "bool", "uint8" … "int64", "float16", "bfloat16", "float32", "float64".
std::string_view dtype_name(DType d);
// Accepts the canonical names and their short forms ("u8", "f16", "half", "float", …).
DType dtype_from_name(std::string_view name);
bool is_float(DType d);

template <typename T>
struct TypeTag {
  using type = T;
};

namespace detail {
template <DType D>
struct TypeOfImpl;
#define STOKER_TYPE_OF(D, T)    \
  template <>                   \
  struct TypeOfImpl<DType::D> { \
    using type = T;             \
  }
STOKER_TYPE_OF(kBool, bool);
STOKER_TYPE_OF(kU8, uint8_t);
STOKER_TYPE_OF(kU16, uint16_t);
STOKER_TYPE_OF(kU32, uint32_t);
STOKER_TYPE_OF(kU64, uint64_t);
STOKER_TYPE_OF(kI8, int8_t);
STOKER_TYPE_OF(kI16, int16_t);
STOKER_TYPE_OF(kI32, int32_t);
STOKER_TYPE_OF(kI64, int64_t);
STOKER_TYPE_OF(kF16, float16);
STOKER_TYPE_OF(kBF16, bfloat16);
STOKER_TYPE_OF(kF32, float);
STOKER_TYPE_OF(kF64, double);
#undef STOKER_TYPE_OF
std::string dtype_list(std::initializer_list<DType> ds);
}  // namespace detail
template <DType D>
using type_of = typename detail::TypeOfImpl<D>::type;

// Calls f(TypeTag<T>{}) for the C++ type T of `d`, which must be one of `Ds`; otherwise throws
// TypeError naming `what` and the supported dtypes. Example:
//   visit_dtype<DType::kU8, DType::kF32>(d, "resize input", [&](auto tag) {
//     using T = typename decltype(tag)::type; ... });
template <DType... Ds, typename F>
decltype(auto) visit_dtype(DType d, std::string_view what, F&& f) {
  using R = decltype(f(TypeTag<type_of<DType::kU8>>{}));
  if constexpr (std::is_void_v<R>) {
    bool done = ((d == Ds ? (f(TypeTag<type_of<Ds>>{}), true) : false) || ...);
    STOKER_ENFORCE(done, TypeError, what, ": unsupported dtype ", dtype_name(d),
                   "; expected one of ", detail::dtype_list({Ds...}));
  } else {
    R result{};
    bool done = ((d == Ds ? (result = f(TypeTag<type_of<Ds>>{}), true) : false) || ...);
    STOKER_ENFORCE(done, TypeError, what, ": unsupported dtype ", dtype_name(d),
                   "; expected one of ", detail::dtype_list({Ds...}));
    return result;
  }
}

// visit_dtype over every numeric dtype (all 13).
template <typename F>
decltype(auto) visit_numeric(DType d, std::string_view what, F&& f) {
  return visit_dtype<DType::kBool, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8,
                     DType::kI16, DType::kI32, DType::kI64, DType::kF16, DType::kBF16, DType::kF32,
                     DType::kF64>(d, what, std::forward<F>(f));
}

// Converts a float to an arithmetic or 16-bit-float type: rounds to nearest (half away from
// zero) and saturates for integers; RNE for float16/bfloat16.
template <typename T>
inline T convert_sat(float v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return v;
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.f;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
    // The 8- and 16-bit types (images) without libm's roundf, a call per value that took a
    // fifth of a CPU resize: clamp to just outside the range (NaN to 0), truncate, then step
    // away from zero on a fraction of one half or more. Exact (the same as std::round) because
    // the clamped values are far below 2^23, where truncation and the fraction are exact.
    constexpr float lo = float(std::numeric_limits<T>::min()) - 1.f;
    constexpr float hi = float(std::numeric_limits<T>::max()) + 1.f;
    const float c = v == v ? (v < lo ? lo : (v > hi ? hi : v)) : 0.f;
    int t = static_cast<int>(c);
    const float f = c - static_cast<float>(t);
    t += int(f >= 0.5f) - int(f <= -0.5f);
    t = t < int(std::numeric_limits<T>::min()) ? int(std::numeric_limits<T>::min()) : t;
    t = t > int(std::numeric_limits<T>::max()) ? int(std::numeric_limits<T>::max()) : t;
    return T(t);
  } else {
    static_assert(std::is_integral_v<T>);
    if (!(v == v)) return T(0);  // NaN
    float r = std::round(v);
    if (r <= float(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (r >= float(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(r);
  }
}

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// A value converted to Out: to floats directly (the nearest representable value), to integers
// from floats rounded half away from zero, and always saturated to Out's range (NaN gives 0).
template <typename Out, typename In>
Out cast_value(In v) {
  if constexpr (std::is_same_v<Out, bool>) {
    if constexpr (is_half_v<In>) {
      return float(v) != 0.f;
    } else {
      return v != In(0);
    }
  } else if constexpr (is_half_v<Out> || std::is_floating_point_v<Out>) {
    if constexpr (is_half_v<In> || is_half_v<Out>) {
      return Out(float(v));
    } else {
      return Out(v);
    }
  } else if constexpr (std::is_integral_v<In>) {
    using L = std::numeric_limits<Out>;
    if constexpr (std::is_signed_v<In>) {
      if (v < 0 && (!std::is_signed_v<Out> || int64_t(v) < int64_t(L::min()))) return L::min();
    }
    if (v > 0 && uint64_t(v) > uint64_t(L::max())) return L::max();
    return Out(v);
  } else {
    double d = 0;
    if constexpr (is_half_v<In>) {
      d = double(float(v));
    } else {
      d = double(v);
    }
    if (!(d == d)) return Out(0);
    const double r = std::round(d);
    // Compare in long double: 2^63 - 1 is not a double.
    if ((long double)r <= (long double)std::numeric_limits<Out>::min())
      return std::numeric_limits<Out>::min();
    if ((long double)r >= (long double)std::numeric_limits<Out>::max())
      return std::numeric_limits<Out>::max();
    return Out(r);
  }
}

// An element as DALI's slice family converts it (crop's and slice's `dtype`): as cast_value, but
// toward zero into integers (2.7 -> 2) and into float16 saturated to +-65504 (a cast gives
// +-inf).
template <typename Out, typename In>
Out slice_cast(In v) {
  if constexpr (std::is_same_v<Out, float16>) {
    float f = float(v);
    f = f > 65504.f ? 65504.f : f < -65504.f ? -65504.f : f;  // NaN stays NaN
    return Out(f);
  } else if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool> &&
                       !std::is_integral_v<In>) {
    double d = 0;
    if constexpr (is_half_v<In>) {
      d = double(float(v));
    } else {
      d = double(v);
    }
    return cast_value<Out>(std::trunc(d));
  } else {
    return cast_value<Out>(v);
  }
}

// A fill value as DALI's slice family (crop, slice, pad, erase, paste, crop_mirror_normalize)
// writes it, a static_cast: truncated toward zero for integers. Out of Out's range it saturates
// (a static_cast is undefined there; DALI's wraps, 300 becoming 44 in uint8).
template <typename Out>
Out fill_cast(double v) {
  if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool>) {
    return cast_value<Out>(std::trunc(v));
  } else {
    return cast_value<Out>(v);
  }
}

template <typename T>
inline float to_float(T v) {
  return static_cast<float>(v);
}

}  // namespace stoker
