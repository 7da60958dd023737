#include "stoker/kernels/geometry/displacement_cpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// Bilinear as a tent-weighted sum over the pixels around (sx, sy) in corner-origin coordinates
// (weights max(0, 1 - |d|) per axis, pixel centres at +0.5), out-of-image pixels giving the
// fill: a different formulation from the kernel's.
double ref_linear(const std::vector<float>& img, int64_t h, int64_t w, double sx, double sy,
                  float fill) {
  double v = 0;
  for (int64_t y = int64_t(std::floor(sy)) - 1; y <= int64_t(std::floor(sy)) + 1; ++y)
    for (int64_t x = int64_t(std::floor(sx)) - 1; x <= int64_t(std::floor(sx)) + 1; ++x) {
      const double wx = std::max(0.0, 1 - std::fabs(sx - (x + 0.5)));
      const double wy = std::max(0.0, 1 - std::fabs(sy - (y + 0.5)));
      const bool in = x >= 0 && y >= 0 && x < w && y < h;
      v += wx * wy * (in ? img[size_t(y * w + x)] : fill);
    }
  return v;
}

// DALI's water and sphere maps written out per pixel in double (the kernel uses float and
// tables): the source point of output pixel (x, y).
void ref_point(DisplaceMap map, int64_t x, int64_t y, int64_t h, int64_t w, const float* wave,
               double& sx, double& sy) {
  if (map == DisplaceMap::kWater) {
    sx = x + wave[0] * std::sin(double(wave[1]) * y + wave[2]);
    sy = y + wave[3] * std::cos(double(wave[4]) * x + wave[5]);
  } else {
    const double mx = w / 2.0, my = h / 2.0, d = std::floor(std::max(mx, my));
    const double tx = x + 0.5 - mx, ty = y + 0.5 - my, r = std::hypot(tx, ty) / d;
    sx = mx + r * tx, sy = my + r * ty;
  }
}

DisplaceSample make(const std::vector<float>& img, std::vector<float>& out, int64_t h, int64_t w,
                    float fill, std::vector<float>& tables, const float* wave) {
  tables.resize(size_t(h + w));
  water_offsets(wave[0], wave[1], wave[2], false, h, tables.data());
  water_offsets(wave[3], wave[4], wave[5], true, w, tables.data() + h);
  DisplaceSample s;
  s.in = img.data(), s.out = out.data(), s.h = h, s.w = w, s.fill = fill;
  s.dx = tables.data(), s.dy = tables.data() + h;
  return s;
}

TEST(DisplaceCpu, WaterAndSphereMatchPerPixelMaps) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int64_t h = 23, w = 31;
  std::vector<float> img(size_t(h * w));
  for (auto& v : img) v = float(rng() % 256);
  for (int t = 0; t < 12; ++t) {
    const float wave[6] = {4 * u(rng), 0.3f * u(rng), 3 * u(rng),
                           4 * u(rng), 0.3f * u(rng), 3 * u(rng)};
    for (DisplaceMap map : {DisplaceMap::kWater, DisplaceMap::kSphere}) {
      std::vector<float> lin(img.size()), nn(img.size()), tables;
      auto s = make(img, lin, h, w, -3.f, tables, wave);
      displace_cpu<float>(s, 1, map, true);
      s.out = nn.data();
      displace_cpu<float>(s, 1, map, false);
      int nn_near_edges = 0;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          double sx, sy;
          ref_point(map, x, y, h, w, wave, sx, sy);
          ASSERT_NEAR(lin[size_t(y * w + x)], ref_linear(img, h, w, sx, sy, -3.f), 2e-2)
              << "map " << int(map) << " at " << x << "," << y;
          // Nearest: the pixel containing the point; float vs double may disagree within a
          // hair of a pixel edge only.
          const int64_t ix = int64_t(std::floor(sx)), iy = int64_t(std::floor(sy));
          const bool in = ix >= 0 && iy >= 0 && ix < w && iy < h;
          const float want = in ? img[size_t(iy * w + ix)] : -3.f;
          if (nn[size_t(y * w + x)] != want) {
            const double ex = std::fabs(sx - std::round(sx)), ey = std::fabs(sy - std::round(sy));
            ASSERT_LT(std::min(ex, ey), 1e-4) << "map " << int(map) << " at " << x << "," << y;
            ++nn_near_edges;
          }
        }
      EXPECT_LE(nn_near_edges, 2);
    }
  }
}

TEST(DisplaceCpu, ZeroAmplitudeNearestIsTheIdentityAndMaskCopies) {
  std::mt19937 rng(3);
  const int64_t h = 7, w = 9, c = 3;
  std::vector<uint8_t> img(size_t(h * w * c)), out(img.size());
  for (auto& v : img) v = uint8_t(rng());
  const float wave[6] = {0, 0.05f, 0, 0, 0.05f, 0};
  std::vector<float> tables(size_t(h + w));
  water_offsets(0, 0.05f, 0, false, h, tables.data());
  water_offsets(0, 0.05f, 0, true, w, tables.data() + h);
  DisplaceSample s;
  s.in = img.data(), s.out = out.data(), s.h = h, s.w = w, s.dx = tables.data(),
  s.dy = tables.data() + h;
  displace_cpu<uint8_t>(s, c, DisplaceMap::kWater, false);
  EXPECT_EQ(out, img);
  // Linear at integer points (corner origin) averages four pixels: top-left takes a quarter of
  // pixel (0, 0) and three quarters of the fill.
  s.fill = 8;
  displace_cpu<uint8_t>(s, c, DisplaceMap::kWater, true);
  EXPECT_EQ(out[0], uint8_t(std::lround(img[0] / 4.0 + 6)));
  s.apply = 0;
  std::fill(out.begin(), out.end(), 0);
  displace_cpu<uint8_t>(s, c, DisplaceMap::kSphere, true);
  EXPECT_EQ(out, img);
  (void)wave;
}

TEST(DisplaceCpu, SphereOfOnePixelIsNanWhenLinearAndFarPointsTakeTheFill) {
  std::vector<float> img{5.f}, out{0.f};
  DisplaceSample s;
  s.in = img.data(), s.out = out.data(), s.h = 1, s.w = 1, s.fill = 2.5f;
  displace_cpu<float>(s, 1, DisplaceMap::kSphere, false);
  EXPECT_EQ(out[0], 2.5f);
  displace_cpu<float>(s, 1, DisplaceMap::kSphere, true);  // DALI's 0 / 0: NaN
  EXPECT_TRUE(std::isnan(out[0]));
  std::vector<float> far{1e12f, std::nanf("")};  // row offset, column offset
  s.dx = far.data(), s.dy = far.data() + 1;
  displace_cpu<float>(s, 1, DisplaceMap::kWater, false);
  EXPECT_EQ(out[0], 2.5f);
}

// The grid in double from the paper's definition: rotate, shift, divide by the tile; kept where
// a fractional part reaches the ratio. Float rounding may flip pixels within a hair of an edge.
TEST(GridMaskCpu, MatchesTheRotatedGridInDouble) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(0, 1);
  const int64_t h = 40, w = 57, c = 2;
  std::vector<int16_t> img(size_t(h * w * c)), out(img.size());
  for (auto& v : img) v = int16_t(int(rng() % 2000) - 1000);
  for (int t = 0; t < 20; ++t) {
    const int64_t tile = 2 + int64_t(rng() % 30);
    const double ratio = u(rng), angle = 7 * u(rng) - 3.5, shx = 60 * u(rng) - 30,
                 shy = 60 * u(rng) - 30;
    GridMaskSample s;
    s.in = img.data(), s.out = out.data(), s.h = h, s.w = w;
    grid_mask_setup(s, tile, float(ratio), float(angle), float(shx), float(shy));
    grid_mask_cpu<int16_t>(s, c);
    int kept = 0;
    const double a = double(float(angle)), r = double(float(ratio));
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const double fx = (x * std::cos(a) - y * std::sin(a) - double(float(shx))) / double(tile);
        const double fy = (x * std::sin(a) + y * std::cos(a) - double(float(shy))) / double(tile);
        const double px = fx - std::floor(fx), py = fy - std::floor(fy);
        const bool keep = px >= r || py >= r;
        const bool got = out[size_t((y * w + x) * c)] == img[size_t((y * w + x) * c)] &&
                         out[size_t((y * w + x) * c + 1)] == img[size_t((y * w + x) * c + 1)];
        const bool zero =
            out[size_t((y * w + x) * c)] == 0 && out[size_t((y * w + x) * c + 1)] == 0;
        ASSERT_TRUE(got || zero);
        if (keep != got || (!keep && !zero)) {
          const double edge =
              std::min({std::fabs(px - r), std::fabs(py - r), px, py, 1 - px, 1 - py});
          ASSERT_LT(edge, 1e-4) << "tile " << tile << " at " << x << "," << y;
        }
        kept += got;
      }
    EXPECT_GT(kept, 0);
  }
}

}  // namespace
}  // namespace stoker::kernels
