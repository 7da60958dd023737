#include "stoker/kernels/color/equalize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// OpenCV's equalizeHist written out: cumulative counts past the lowest value, scaled by
// 255 / (N - h[lowest]) in float, rounded half to even.
std::vector<uint8_t> ref_channel(const std::vector<uint8_t>& v) {
  std::vector<int> h(256);
  for (auto x : v) ++h[x];
  int lo = 0;
  while (h[size_t(lo)] == 0) ++lo;
  if (h[size_t(lo)] == int(v.size())) return v;
  const float scale = 255.f / float(int(v.size()) - h[size_t(lo)]);
  std::vector<uint8_t> lut(256);
  int sum = 0;
  for (int k = lo + 1; k < 256; ++k) {
    sum += h[size_t(k)];
    lut[size_t(k)] = uint8_t(std::min(255.f, std::nearbyint(float(sum) * scale)));
  }
  std::vector<uint8_t> out;
  for (auto x : v) out.push_back(lut[x]);
  return out;
}

TEST(EqualizeCpu, EachChannelOfEachPlaneAsOpenCv) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(90.f, 25.f);
  for (EqualizeShape s : {EqualizeShape{1, 37 * 29, 3}, EqualizeShape{3, 11 * 7, 1},
                          EqualizeShape{1, 1, 1}, EqualizeShape{2, 5, 2}}) {
    std::vector<uint8_t> in(size_t(s.planes * s.pixels * s.channels)), out(in.size());
    for (auto& v : in) v = uint8_t(std::clamp(n(rng), 0.f, 255.f));
    equalize_cpu(in.data(), out.data(), s);
    for (int64_t p = 0; p < s.planes; ++p)
      for (int64_t c = 0; c < s.channels; ++c) {
        std::vector<uint8_t> ch, got;
        for (int64_t k = 0; k < s.pixels; ++k) {
          const size_t at = size_t((p * s.pixels + k) * s.channels + c);
          ch.push_back(in[at]), got.push_back(out[at]);
        }
        EXPECT_EQ(got, ref_channel(ch)) << "plane " << p << " channel " << c;
      }
  }
}

TEST(EqualizeCpu, SingleValueIsKeptAndTiesRoundToEven) {
  std::vector<uint8_t> in(12, 9), out(12);
  equalize_cpu(in.data(), out.data(), EqualizeShape{1, 12, 1});
  EXPECT_EQ(out, in);
  // Two values: the lower becomes 0, the higher 255.
  in = {4, 4, 4, 200}, out.assign(4, 1);
  equalize_cpu(in.data(), out.data(), EqualizeShape{1, 4, 1});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 0, 255}));
  // N - h[lo] = 2 with 1 and 1 above: 127.5 -> 128 (half to even), then 255.
  in = {0, 10, 20}, out.assign(3, 1);
  equalize_cpu(in.data(), out.data(), EqualizeShape{1, 3, 1});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 128, 255}));
}

}  // namespace
}  // namespace stoker::kernels
