#include "stoker/kernels/filter/rank_filter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "stoker/kernels/filter/border_reference.hpp"

namespace stoker::kernels {
namespace {

using reference::ref_index;

// One pass by sorting each window (median) or std::min/max over it.
template <typename T>
std::vector<T> ref_pass(const std::vector<T>& in, const RankShape& s, RankOp op) {
  std::vector<T> out(in.size());
  const T fill =
      op == RankOp::kDilate ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  for (int64_t p = 0; p < s.planes; ++p)
    for (int64_t y = 0; y < s.height; ++y)
      for (int64_t x = 0; x < s.width; ++x)
        for (int64_t c = 0; c < s.channels; ++c) {
          std::vector<T> win;
          for (int i = 0; i < s.kh; ++i)
            for (int j = 0; j < s.kw; ++j) {
              const int64_t sy = ref_index(y - s.ay + i, s.height, s.border);
              const int64_t sx = ref_index(x - s.ax + j, s.width, s.border);
              win.push_back(
                  sy < 0 || sx < 0
                      ? fill
                      : in[size_t(((p * s.height + sy) * s.width + sx) * s.channels + c)]);
            }
          if (op != RankOp::kMedian) win.push_back(fill);  // where CV-CUDA's max/min start
          std::sort(win.begin(), win.end());
          const T v = op == RankOp::kMedian   ? win[win.size() / 2]
                      : op == RankOp::kDilate ? win.back()
                                              : win.front();
          out[size_t(((p * s.height + y) * s.width + x) * s.channels + c)] = v;
        }
  return out;
}

template <typename T>
void check_type(std::mt19937& rng) {
  const Border borders[] = {Border::kConstant, Border::kClamp, Border::kReflect1001,
                            Border::kReflect101, Border::kWrap};
  struct Dims {
    int64_t planes, h, w, c;
    int32_t kh, kw, ay, ax;
  };
  const std::vector<Dims> dims{{1, 9, 13, 3, 3, 3, 1, 1},
                               {2, 5, 4, 1, 5, 3, 0, 2},
                               {1, 1, 7, 2, 3, 5, 2, 0},
                               {1, 3, 2, 4, 7, 9, 3, 4},
                               {1, 6, 6, 1, 2, 4, 1, 3}};
  for (const auto& g : dims)
    for (RankOp op : {RankOp::kMedian, RankOp::kDilate, RankOp::kErode})
      for (Border b : borders)
        for (int iterations : {1, 2, 3}) {
          RankShape s;
          s.planes = g.planes, s.height = g.h, s.width = g.w, s.channels = g.c;
          s.kh = g.kh, s.kw = g.kw, s.ay = g.ay, s.ax = g.ax, s.border = b;
          if (op == RankOp::kMedian && (s.kh % 2 == 0 || s.kw % 2 == 0)) continue;
          std::vector<T> in(size_t(g.planes * g.h * g.w * g.c));
          for (auto& v : in)
            v = std::is_same_v<T, float> ? T(float(int(rng() % 2001) - 1000) / 8) : T(rng());
          std::vector<T> want = in;
          for (int it = 0; it < iterations; ++it) want = ref_pass(want, s, op);
          std::vector<T> got(in.size()), tmp;
          std::vector<uint32_t> keys;
          rank_filter_cpu(in.data(), got.data(), s, op, iterations, tmp, keys);
          ASSERT_EQ(got, want) << int(op) << " border " << int(b) << " iterations " << iterations
                               << " window " << g.kh << "x" << g.kw;
        }
}

TEST(RankFilterCpu, MatchesSortingEachWindow) {
  std::mt19937 rng(11);
  check_type<uint8_t>(rng);
  check_type<uint16_t>(rng);
  check_type<float>(rng);
}

TEST(RankFilterCpu, KeysOrderLikeTheValues) {
  const float v[] = {-INFINITY, -1e30f, -2.5f,     -1e-40f, -0.f,
                     0.f,       1e-40f, 1.17e-38f, 3.f,     INFINITY};
  for (size_t i = 0; i + 1 < std::size(v); ++i) {
    EXPECT_LT(rank_key(v[i]), rank_key(v[i + 1])) << v[i];
    EXPECT_EQ(std::bit_cast<uint32_t>(rank_value<float>(rank_key(v[i]))),
              std::bit_cast<uint32_t>(v[i]));
  }
  EXPECT_EQ(rank_border_fill<float>(RankOp::kDilate), std::numeric_limits<float>::min());
  EXPECT_EQ(rank_border_fill<uint16_t>(RankOp::kErode), 65535);
}

}  // namespace
}  // namespace stoker::kernels
