#include "stoker/kernels/filter/filter.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "stoker/kernels/filter/border_reference.hpp"

namespace stoker::kernels {
namespace {

using reference::ref_index;

// The definition, one output value at a time: the non-zero taps in row-major order, each
// fused (std::fma) or a product and a sum by the element's place in the row.
float ref_value(const std::vector<float>& in, const std::vector<float>& k, const FilterShape& s,
                float fill, int64_t p, int64_t z, int64_t y, int64_t e) {
  const int64_t C = s.channels, x = e / C, c = e % C;
  float acc = 0.f;
  for (int64_t tz = 0; tz < s.k[0]; ++tz)
    for (int64_t ty = 0; ty < s.k[1]; ++ty)
      for (int64_t tx = 0; tx < s.k[2]; ++tx) {
        const float w = k[size_t((tz * s.k[1] + ty) * s.k[2] + tx)];
        if (w == 0.f) continue;
        const int64_t iz = ref_index(z + tz - s.anchor[0], s.in[0], s.border);
        const int64_t iy = ref_index(y + ty - s.anchor[1], s.in[1], s.border);
        const int64_t ix = ref_index(x + tx - s.anchor[2], s.in[2], s.border);
        const float v =
            iz < 0 || iy < 0 || ix < 0
                ? fill
                : in[size_t(((((p * s.in[0]) + iz) * s.in[1] + iy) * s.in[2] + ix) * C + c)];
        if (e < s.fused) {
          acc = std::fma(v, w, acc);
        } else {
          volatile float prod = v * w;  // rounded before the sum
          acc = acc + prod;
        }
      }
  return acc;
}

struct Case {
  FilterShape s;
  std::vector<float> in, k;
};

Case make_case(std::mt19937& rng, int64_t planes, int64_t d, int64_t h, int64_t w, int64_t c,
               int64_t kd, int64_t kh, int64_t kw, Border b, bool valid, int64_t fused_block) {
  Case t;
  auto& s = t.s;
  s.planes = planes, s.channels = c, s.border = b;
  const int64_t in[3] = {d, h, w}, k[3] = {kd, kh, kw};
  for (int a = 0; a < 3; ++a) {
    s.in[a] = in[a], s.k[a] = k[a];
    s.out[a] = valid ? in[a] - k[a] + 1 : in[a];
    s.anchor[a] = valid ? 0 : int64_t(rng() % uint32_t(k[a]));
  }
  const int64_t row = s.out[2] * c;
  s.fused = fused_block ? row - row % fused_block : 0;
  std::uniform_int_distribution<int> px(0, 255);
  std::uniform_real_distribution<float> u(-0.3f, 1.f);
  t.in.resize(size_t(planes * d * h * w * c));
  for (auto& v : t.in) v = float(px(rng));
  t.k.resize(size_t(kd * kh * kw));
  for (auto& v : t.k) v = rng() % 4 == 0 ? 0.f : u(rng) / 3;
  return t;
}

TEST(FilterCpu, MatchesTheDefinitionForEveryBorderAndShape) {
  std::mt19937 rng(11);
  for (Border b : {Border::kReflect101, Border::kReflect1001, Border::kWrap, Border::kClamp,
                   Border::kConstant})
    for (int valid = 0; valid < 2; ++valid)
      for (int64_t block : {0, 4, 8}) {
        // 2-D with channels, a filter larger than the image (taps reflect more than once),
        // channel planes, and a volume.
        for (auto t :
             {make_case(rng, 1, 1, 9, 13, 3, 1, 3, 5, b, valid, block),
              make_case(rng, 1, 1, 3, 2, 1, 1, valid ? 3 : 7, valid ? 2 : 6, b, valid, block),
              make_case(rng, 2, 1, 6, 5, 1, 1, 2, 3, b, valid, block),
              make_case(rng, 1, 4, 5, 6, 2, 3, 2, 3, b, valid, block)}) {
          const auto& s = t.s;
          const float fill = 17.f;
          std::vector<float> out(size_t(s.planes * s.out[0] * s.out[1] * s.out[2] * s.channels));
          std::vector<float> scratch;
          filter_cpu(t.in.data(), out.data(), t.k.data(), s, fill, scratch);
          const int64_t row = s.out[2] * s.channels;
          size_t at = 0;
          for (int64_t p = 0; p < s.planes; ++p)
            for (int64_t z = 0; z < s.out[0]; ++z)
              for (int64_t y = 0; y < s.out[1]; ++y)
                for (int64_t e = 0; e < row; ++e, ++at)
                  ASSERT_EQ(out[at], ref_value(t.in, t.k, s, fill, p, z, y, e))
                      << "border " << int(b) << " valid " << valid << " at " << at;
        }
      }
}

TEST(FilterCpu, IntegerOutputsRoundHalfToEvenAndSaturate) {
  EXPECT_EQ(filter_store<uint8_t>(2.5f), 2);
  EXPECT_EQ(filter_store<uint8_t>(3.5f), 4);
  EXPECT_EQ(filter_store<uint8_t>(-0.5f), 0);
  EXPECT_EQ(filter_store<uint8_t>(300.f), 255);
  EXPECT_EQ(filter_store<uint8_t>(NAN), 0);
  EXPECT_EQ(filter_store<int16_t>(-2.5f), -2);
  EXPECT_EQ(filter_store<int16_t>(-1e9f), -32768);
  EXPECT_EQ(filter_store<uint16_t>(65535.4f), 65535);
  EXPECT_EQ(filter_store<int8_t>(-128.6f), -128);
  // A 1x2 filter over [1, 2]: 0.5 * 1 + 0.5 * 2 = 1.5 -> 2; [3, 4] x 0.5 -> 3.5 -> 4.
  FilterShape s;
  s.in[2] = s.out[2] = 2, s.k[2] = 2, s.anchor[2] = 0, s.border = Border::kClamp;
  const uint8_t in[2] = {1, 2};
  const float k[2] = {0.5f, 0.5f};
  uint8_t out[2];
  std::vector<float> scratch;
  filter_cpu(in, out, k, s, 0.f, scratch);
  EXPECT_EQ(out[0], 2);  // 1.5
  EXPECT_EQ(out[1], 2);  // 0.5 * 2 + 0.5 * 2 = 2
}

// Where a fused multiply-add and a product then a sum round differently, `fused` decides.
TEST(FilterCpu, FusedPrefixChoosesTheAccumulation) {
  EXPECT_EQ(fused_prefix(DType::kU8, DType::kU8, 37), 36);
  EXPECT_EQ(fused_prefix(DType::kI16, DType::kI16, 7), 4);
  EXPECT_EQ(fused_prefix(DType::kF32, DType::kF32, 53), 48);
  EXPECT_EQ(fused_prefix(DType::kU8, DType::kF32, 64), 0);
  // a * w = 1 + 2^-11 + 2^-24, which rounds to 1 + 2^-11 (a tie, to even) unless fused.
  const float a = 1.f + 0x1p-12f, w = 1.f + 0x1p-12f;
  float acc_fused[1] = {-1.f - 0x1p-11f}, acc_plain[1] = {-1.f - 0x1p-11f};
  const float src[1] = {a};
  filter_accumulate(acc_fused, src, w, 1, 1);
  filter_accumulate(acc_plain, src, w, 1, 0);
  EXPECT_EQ(acc_fused[0], 0x1p-24f);
  EXPECT_EQ(acc_plain[0], 0.f);
}

}  // namespace
}  // namespace stoker::kernels
