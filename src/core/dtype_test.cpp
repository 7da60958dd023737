#include "stoker/core/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace stoker {
namespace {

// Slow reference: the nearest half value by exhaustive search over all finite halves (ties to
// the even bit pattern), computed in double.
uint16_t half_reference(float f) {
  if (std::isnan(f)) return 0x7e00;
  double v = f;
  uint16_t best = 0;
  double best_err = INFINITY;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    double hv = half_bits_to_float(uint16_t(h));
    double err = std::fabs(std::fabs(v) - hv);
    if (err < best_err || (err == best_err && (h & 1) == 0)) {
      best_err = err;
      best = uint16_t(h);
    }
  }
  if (std::fabs(v) >= 65520.0) best = 0x7c00;
  return uint16_t(best | (std::signbit(f) ? 0x8000 : 0));
}

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(dtype_size(DType::kF16), 2u);
  EXPECT_EQ(dtype_size(DType::kI64), 8u);
  EXPECT_EQ(dtype_name(DType::kBF16), "bfloat16");
  EXPECT_EQ(dtype_from_name("FLOAT16"), DType::kF16);
  EXPECT_EQ(dtype_from_name("u8"), DType::kU8);
  try {
    dtype_from_name("complex7");
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "unknown dtype 'complex7'");
  }
}

TEST(DType, HalfRoundTripOfEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaN payloads
    EXPECT_EQ(float_to_half_bits(half_bits_to_float(uint16_t(h))), h) << std::hex << h;
  }
}

TEST(DType, HalfRoundingMatchesExhaustiveReference) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mag(-30.f, 17.f);
  for (int i = 0; i < 3000; ++i) {
    float f = std::exp2(mag(rng)) * (rng() & 1 ? -1.f : 1.f);
    ASSERT_EQ(float_to_half_bits(f), half_reference(f)) << f;
  }
  // Exact ties between two halves round to even.
  EXPECT_EQ(float_to_half_bits(1.0f + 1.0f / 2048), 0x3c00);
  EXPECT_EQ(float_to_half_bits(1.0f + 3.0f / 2048), 0x3c02);
  EXPECT_EQ(float_to_half_bits(65504.f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-INFINITY), 0xfc00);
}

// The bulk conversion (F16C where the CPU has it) gives the scalar routine's bits for every
// 127th float bit pattern (all exponents, both signs, ties, subnormals, infinities) and every
// NaN flavour; NaNs may differ in payload but stay NaNs of the same sign.
TEST(DType, BulkHalfConversionMatchesTheScalarOne) {
  std::vector<float> in;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 127)
    in.push_back(std::bit_cast<float>(uint32_t(b)));
  for (uint32_t b : {0x7f800001u, 0x7fc00000u, 0xffc00001u, 0x7fbfffffu, 0x33000000u, 0x33000001u,
                     0x387fe000u, 0x477fefffu, 0x477ff000u})
    in.push_back(std::bit_cast<float>(b));
  in.push_back(1.0f + 1.0f / 2048);  // ties to even, here and in the tail loop (n % 8 != 0)
  std::vector<float16> out(in.size());
  floats_to_halves(in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const uint16_t want = float_to_half_bits(in[i]);
    if (std::isnan(in[i])) {
      ASSERT_EQ(out[i].bits & 0xfe00, want & 0xfe00) << std::hex << std::bit_cast<uint32_t>(in[i]);
      ASSERT_NE(out[i].bits & 0x3ff, 0);
    } else {
      ASSERT_EQ(out[i].bits, want) << std::hex << std::bit_cast<uint32_t>(in[i]);
    }
  }
}

TEST(DType, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // tie -> even
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // tie -> even
  EXPECT_EQ(bfloat16(std::bit_cast<float>(0x3f808001u)).bits, 0x3f81);
  EXPECT_TRUE(std::isnan(float(bfloat16(NAN))));
}

TEST(DType, ConvertSaturates) {
  EXPECT_EQ(convert_sat<uint8_t>(300.f), 255);
  EXPECT_EQ(convert_sat<uint8_t>(-3.f), 0);
  EXPECT_EQ(convert_sat<uint8_t>(2.5f), 3);  // half away from zero
  EXPECT_EQ(convert_sat<int8_t>(-2.5f), -3);
  EXPECT_EQ(convert_sat<int16_t>(NAN), 0);
}

// The 8/16-bit conversion avoids std::round; it must give the same integer as the std::round
// and saturate reference for every float: ties, values next to them, the range ends, huge
// values, infinities and NaN, and a dense sweep.
template <typename T>
T convert_sat_reference(float v) {
  if (!(v == v)) return T(0);
  const float r = std::round(v);
  if (r <= float(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= float(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return T(r);
}

template <typename T>
void expect_same_as_round(const std::vector<float>& values) {
  for (float v : values) ASSERT_EQ(int(convert_sat<T>(v)), int(convert_sat_reference<T>(v))) << v;
}

TEST(DType, SmallIntegerConversionMatchesRoundAndSaturate) {
  std::vector<float> values{NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 0.f, -0.f};
  for (float t : {0.5f, 1.5f, 2.5f, 126.5f, 127.5f, 128.5f, 254.5f, 255.5f, 256.5f, 32766.5f,
                  32767.5f, 65534.5f, 65535.5f}) {
    for (float s : {t, -t}) {
      values.push_back(s);
      values.push_back(std::nextafter(s, 0.f));
      values.push_back(std::nextafter(s, 2 * s));
    }
  }
  for (float v = -70000.f; v <= 70000.f; v += 0.37f) values.push_back(v);
  expect_same_as_round<uint8_t>(values);
  expect_same_as_round<int8_t>(values);
  expect_same_as_round<uint16_t>(values);
  expect_same_as_round<int16_t>(values);
}

TEST(DType, VisitDispatchesAndRejects) {
  size_t s = visit_dtype<DType::kU8, DType::kF32>(
      DType::kF32, "test", [](auto tag) { return sizeof(typename decltype(tag)::type); });
  EXPECT_EQ(s, 4u);
  try {
    visit_dtype<DType::kU8, DType::kF32>(DType::kI16, "resize input", [](auto) {});
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "resize input: unsupported dtype int16; expected one of uint8, float32");
  }
}

}  // namespace
}  // namespace stoker
