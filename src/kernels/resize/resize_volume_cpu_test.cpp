#include "stoker/kernels/resize/resize_volume_cpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace stoker::kernels {
namespace {

std::vector<float> random_volume(const VolumeShape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 200.f);
  std::vector<float> v(size_t(s.depth * s.plane()));
  for (auto& x : v) x = u(rng);
  return v;
}

// The separable definition in double: each slice's plane resized (the 2-D weights), then the
// depth weights applied.
std::vector<double> reference(const std::vector<float>& in, const VolumeShape& is,
                              const VolumeShape& os, Filter f, bool antialias,
                              const VolumeRoi& roi) {
  auto wz = resample_weights(is.depth, os.depth, f, antialias, roi.z0, roi.z1, true);
  auto wy = resample_weights(is.height, os.height, f, antialias, roi.plane.y0, roi.plane.y1, true);
  auto wx = resample_weights(is.width, os.width, f, antialias, roi.plane.x0, roi.plane.x1);
  const int64_t C = is.channels;
  std::vector<double> out(size_t(os.depth * os.plane()), 0.0);
  for (int64_t z = 0; z < os.depth; ++z)
    for (int64_t y = 0; y < os.height; ++y)
      for (int64_t x = 0; x < os.width; ++x)
        for (int64_t c = 0; c < C; ++c) {
          double acc = 0;
          for (int kz = 0; kz < wz.count[size_t(z)]; ++kz)
            for (int ky = 0; ky < wy.count[size_t(y)]; ++ky)
              for (int kx = 0; kx < wx.count[size_t(x)]; ++kx) {
                const int64_t sz = wz.first[size_t(z)] + kz, sy = wy.first[size_t(y)] + ky,
                              sx = wx.first[size_t(x)] + kx;
                acc += double(wz.weights[size_t(z) * size_t(wz.support) + size_t(kz)]) *
                       wy.weights[size_t(y) * size_t(wy.support) + size_t(ky)] *
                       wx.weights[size_t(x) * size_t(wx.support) + size_t(kx)] *
                       in[size_t(((sz * is.height + sy) * is.width + sx) * C + c)];
              }
          out[size_t(((z * os.height + y) * os.width + x) * C + c)] = acc;
        }
  return out;
}

struct VolumeCase {
  VolumeShape in, out;
  Filter filter;
  bool antialias;
  VolumeRoi roi;
};

class ResizeVolume : public ::testing::TestWithParam<VolumeCase> {};

TEST_P(ResizeVolume, IsTheSeparableDefinitionInEitherOrder) {
  const auto& p = GetParam();
  auto in = random_volume(p.in, 11);
  std::vector<float> out(size_t(p.out.depth * p.out.plane()), NAN), slices, scratch;
  resize_volume_cpu<float, float>(out.data(), p.out, in.data(), p.in, p.filter, p.antialias, p.roi,
                                  slices, scratch);
  auto ref = reference(in, p.in, p.out, p.filter, p.antialias, p.roi);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 2e-3) << i;
  // Nothing larger than the input or the output was held.
  EXPECT_LE(slices.size(),
            size_t(std::max(p.in.depth * p.in.plane(), p.out.depth * p.out.plane())));
}

const VolumeRoi kWhole{0, 9, {0, 11, 0, 13}};

INSTANTIATE_TEST_SUITE_P(
    Shapes, ResizeVolume,
    ::testing::Values(
        // the planes grow: depth first; the planes shrink: planes first
        VolumeCase{{9, 11, 13, 2}, {4, 20, 25, 2}, Filter::kLinear, true, kWhole},
        VolumeCase{{9, 11, 13, 2}, {14, 5, 6, 2}, Filter::kLinear, true, kWhole},
        VolumeCase{{9, 11, 13, 1}, {14, 5, 6, 1}, Filter::kCubic, false, kWhole},
        VolumeCase{{9, 11, 13, 3}, {6, 7, 30, 3}, Filter::kLanczos3, true, kWhole},
        // a flipped region reaching outside, and a region of a few slices (planes first reads
        // only those)
        VolumeCase{{9, 11, 13, 1},
                   {5, 4, 4, 1},
                   Filter::kLinear,
                   true,
                   {8.5, -1.0, {2.0, 9.5, 12.0, 1.0}}},
        VolumeCase{
            {9, 11, 13, 1}, {3, 4, 4, 1}, Filter::kNearest, false, {2.2, 4.7, {0, 11, 0, 13}}}));

TEST(ResizeVolume, Uint8IsRoundedAndSaturated) {
  const VolumeShape is{4, 5, 6, 1}, os{7, 3, 4, 1};
  std::vector<uint8_t> in(size_t(is.depth * is.plane()));
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 37 % 256);
  std::vector<float> fin(in.begin(), in.end());
  std::vector<uint8_t> out(size_t(os.depth * os.plane()));
  std::vector<float> slices, scratch;
  const VolumeRoi roi{0, 4, {0, 5, 0, 6}};
  resize_volume_cpu<uint8_t, uint8_t>(out.data(), os, in.data(), is, Filter::kCubic, true, roi,
                                      slices, scratch);
  auto ref = reference(fin, is, os, Filter::kCubic, true, roi);
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_LE(std::abs(double(out[i]) - std::clamp(std::round(ref[i]), 0.0, 255.0)), 1.0) << i;
}

// DALI's nearest neighbour over a region: its first pass starts from the first pixel it reads,
// so positions are computed from the region's start less that index. Rows 3.3333333 ->
// 16.666666 of a 20 x 31 image into 20 rows (the window of a resize to 30 x 40): DALI's rows,
// measured.
TEST(ResizeFilters, NearestOverARegionStartsWhereDalisFirstPassStarts) {
  const double y0 = float(5 * (20.0 / 30)), y1 = float(25 * (20.0 / 30));
  const double x0 = float(8 * (31.0 / 40)), x1 = float(32 * (31.0 / 40));
  const auto [sy, sx] = nn_origin_shift(20, 31, 20, 24, y0, y1, x0, x1);
  EXPECT_EQ(sy, 3);  // the horizontal pass comes first (on rows 3 to 17): the rows' origin moves
  EXPECT_EQ(sx, 0);
  auto w = resample_weights(20, 20, Filter::kNearest, false, y0, y1, true, sy);
  const std::vector<int64_t> dali{3,  4,  4,  5,  6,  6,  7,  8,  8,  9,
                                  10, 10, 11, 12, 12, 13, 14, 15, 15, 16};
  EXPECT_EQ(w.first, dali);
  auto unshifted = resample_weights(20, 20, Filter::kNearest, false, y0, y1, true);
  EXPECT_NE(unshifted.first, dali);  // the same positions from 3.33: row 11 rounds up
  // A vertical pass first (a wide, flat output) moves the columns' origin instead.
  const auto [ty, tx] = nn_origin_shift(20, 31, 2, 40, 0, 20, 5.5, 30.5);
  EXPECT_EQ(ty, 0);
  EXPECT_EQ(tx, 5);
}

}  // namespace
}  // namespace stoker::kernels
