#include "stoker/core/dtype.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include <array>
#include <cstring>

#include "stoker/core/cpu_features.hpp"

namespace stoker {

uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN (keep NaN quiet and non-zero)
    return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
  }
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (absx < 0x38800000u) {  // below 2^-14: half subnormal (or zero); unit is 2^-24
    float scaled = std::bit_cast<float>(absx) * 16777216.0f;   // exact: power-of-two scale
    return uint16_t(sign | uint32_t(std::nearbyint(scaled)));  // RNE (default FP mode)
  }
  uint32_t h = (absx - 0x38000000u) >> 13;  // rebias exponent 127 -> 15, drop 13 bits
  uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // ties to even
  return uint16_t(sign | h);
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {
__attribute__((target("avx,f16c"))) void floats_to_halves_f16c(const float* src, float16* dst,
                                                               size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = float16::from_bits(float_to_half_bits(src[i]));
}
}  // namespace
#endif

void floats_to_halves(const float* src, float16* dst, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool f16c = cpu_has_f16c();
  if (f16c) return floats_to_halves_f16c(src, dst, n);
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = float16::from_bits(float_to_half_bits(src[i]));
}

float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = float(mant) / 16777216.0f;  // mant * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

bfloat16::bfloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    bits = uint16_t((x >> 16) | 0x40u);  // quiet NaN
  } else {
    bits = uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
}

namespace {
struct DTypeInfo {
  std::string_view name;
  size_t size;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo{{
    {"bool", 1},
    {"uint8", 1},
    {"uint16", 2},
    {"uint32", 4},
    {"uint64", 8},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"float32", 4},
    {"float64", 8},
}};
}  // namespace

size_t dtype_size(DType d) { return kInfo.at(size_t(d)).size; }
std::string_view dtype_name(DType d) { return kInfo.at(size_t(d)).name; }
bool is_float(DType d) {
  return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64;
}

DType dtype_from_name(std::string_view name) {
  std::string n(name);
  for (auto& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == n) return DType(i);
  }
  static const std::pair<std::string_view, DType> kAliases[] = {
      {"u8", DType::kU8},     {"u16", DType::kU16},  {"u32", DType::kU32},    {"u64", DType::kU64},
      {"i8", DType::kI8},     {"i16", DType::kI16},  {"i32", DType::kI32},    {"i64", DType::kI64},
      {"f16", DType::kF16},   {"half", DType::kF16}, {"bf16", DType::kBF16},  {"f32", DType::kF32},
      {"float", DType::kF32}, {"f64", DType::kF64},  {"double", DType::kF64}, {"int", DType::kI32},
  };
  for (auto& [alias, d] : kAliases) {
    if (alias == n) return d;
  }
  throw TypeError("unknown dtype '" + std::string(name) + "'");
}

namespace detail {
std::string dtype_list(std::initializer_list<DType> ds) {
  std::string s;
  for (DType d : ds) {
    if (!s.empty()) s += ", ";
    s += dtype_name(d);
  }
  return s;
}
}  // namespace detail

}  // namespace stoker
