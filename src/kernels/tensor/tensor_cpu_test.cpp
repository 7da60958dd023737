#include "stoker/kernels/tensor/tensor_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace stoker::kernels {
namespace {

TEST(TransposeCpu, MatchesIndexArithmeticForRandomPermutations) {
  std::mt19937 rng(3);
  for (int t = 0; t < 200; ++t) {
    const size_t nd = 1 + rng() % 5;
    std::vector<int64_t> shape(nd);
    int64_t volume = 1;
    for (auto& d : shape) volume *= (d = int64_t(rng() % 4));  // zeros included
    std::vector<int> perm(nd);
    for (size_t k = 0; k < nd; ++k) perm[k] = int(k);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<uint16_t> in(static_cast<size_t>(volume));
    for (auto& v : in) v = uint16_t(rng());
    std::vector<uint16_t> got(in.size(), 0), expect(in.size(), 0);
    transpose_cpu(reinterpret_cast<const uint8_t*>(in.data()), shape, perm, 2,
                  reinterpret_cast<uint8_t*>(got.data()));
    // Reference: for every output index, the input index with coordinates permuted back.
    std::vector<int64_t> out_shape(nd);
    for (size_t k = 0; k < nd; ++k) out_shape[k] = shape[size_t(perm[k])];
    for (int64_t o = 0; o < volume; ++o) {
      std::vector<int64_t> oc(nd), ic(nd);
      int64_t r = o;
      for (size_t k = nd; k-- > 0;) oc[k] = r % out_shape[k], r /= out_shape[k];
      for (size_t k = 0; k < nd; ++k) ic[size_t(perm[k])] = oc[k];
      int64_t idx = 0;
      for (size_t k = 0; k < nd; ++k) idx = idx * shape[k] + ic[k];
      expect[size_t(o)] = in[size_t(idx)];
    }
    ASSERT_EQ(got, expect) << "trial " << t;
  }
}

TEST(CastValue, RoundsHalfAwayAndSaturates) {
  EXPECT_EQ((cast_value<uint8_t>(2.5f)), 3);
  EXPECT_EQ((cast_value<int8_t>(-2.5)), -3);
  EXPECT_EQ((cast_value<uint8_t>(-7)), 0);
  EXPECT_EQ((cast_value<uint8_t>(int64_t(1) << 40)), 255);
  EXPECT_EQ((cast_value<int64_t>(1e30)), INT64_MAX);
  EXPECT_EQ((cast_value<uint64_t>(-1.0)), 0u);
  EXPECT_EQ((cast_value<int32_t>(std::numeric_limits<float>::quiet_NaN())), 0);
  EXPECT_EQ((cast_value<int16_t>(uint64_t(40000))), 32767);
  EXPECT_EQ((cast_value<uint32_t>(int64_t(-5))), 0u);
  EXPECT_EQ((cast_value<bool>(0.25f)), true);
  EXPECT_EQ(float(cast_value<float16>(int32_t(3))), 3.f);
  EXPECT_EQ((cast_value<int32_t>(float16(-1.5f))), -2);
  EXPECT_EQ((cast_value<double>(int64_t(1) << 53)), 9007199254740992.0);
}

TEST(JoinCpu, InterleavesTheInputsBlocksAsConcatenationAlongAnAxis) {
  // Concatenating a 2x3 and a 2x1 and a 2x0 int16 array along axis 1: two blocks of each.
  const std::vector<int16_t> a = {1, 2, 3, 4, 5, 6}, b = {7, 8};
  const std::vector<const uint8_t*> in = {reinterpret_cast<const uint8_t*>(a.data()),
                                          reinterpret_cast<const uint8_t*>(b.data()), nullptr};
  const std::vector<size_t> block = {3 * sizeof(int16_t), sizeof(int16_t), 0};
  std::vector<int16_t> out(8);
  join_cpu(in.data(), block.data(), 3, 2, reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, (std::vector<int16_t>{1, 2, 3, 7, 4, 5, 6, 8}));
  join_cpu(in.data(), block.data(), 3, 0, nullptr);  // nothing to copy
}

}  // namespace
}  // namespace stoker::kernels
