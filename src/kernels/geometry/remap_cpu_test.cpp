#include "stoker/kernels/geometry/remap_cpu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// One h x w x c image and maps; run() remaps it with the given maps.
template <typename T>
struct Case {
  int64_t h, w, c;
  std::vector<T> in;
  std::vector<float> mx, my;

  Case(int64_t h_, int64_t w_, int64_t c_) : h(h_), w(w_), c(c_), in(size_t(h * w * c)) {
    mx.assign(size_t(h * w), 0.f), my.assign(size_t(h * w), 0.f);
  }
  std::vector<T> run(RemapInterp interp, float shift = 0.f) const {
    std::vector<T> out(in.size(), T(99));
    RemapSample s;
    s.in = in.data(), s.out = out.data(), s.mapx = mx.data(), s.mapy = my.data();
    s.h = h, s.w = w, s.c = c;
    remap_cpu<T>(s, interp, shift);
    return out;
  }
  T at(int64_t y, int64_t x, int64_t ch) const { return in[size_t((y * w + x) * c + ch)]; }
};

// Integer points read their pixel exactly, with every interpolation and type; 'corner' maps
// (shift -0.5) of pixel centres (i + 0.5) read the same.
template <typename T>
void check_integer_points() {
  std::mt19937 rng(1);
  Case<T> k(6, 9, 3);
  for (auto& v : k.in) v = T(rng() % 200);
  for (int64_t p = 0; p < k.h * k.w; ++p) {
    k.mx[size_t(p)] = float(rng() % uint32_t(k.w));
    k.my[size_t(p)] = float(rng() % uint32_t(k.h));
  }
  for (auto interp : {RemapInterp::kNearest, RemapInterp::kLinear, RemapInterp::kCubic})
    for (float shift : {0.f, -0.5f}) {
      Case<T> c = k;
      for (auto& v : c.mx) v -= shift;
      for (auto& v : c.my) v -= shift;
      const auto out = c.run(interp, shift);
      for (int64_t p = 0; p < k.h * k.w; ++p)
        for (int64_t ch = 0; ch < k.c; ++ch)
          ASSERT_EQ(out[size_t(p * k.c + ch)],
                    k.at(int64_t(k.my[size_t(p)]), int64_t(k.mx[size_t(p)]), ch))
              << int(interp) << " shift " << shift << " pixel " << p;
    }
}

TEST(RemapCpu, IntegerPointsReadTheirPixel) {
  check_integer_points<uint8_t>();
  check_integer_points<uint16_t>();
  check_integer_points<int16_t>();
  check_integer_points<float>();
}

// Points outside [0, w) x [0, h) (NaN among them) give 0 in every channel; the last fraction of
// a pixel inside is sampled, its taps past the edge taking the edge pixel.
TEST(RemapCpu, PointsOutsideTheImageGiveZero) {
  Case<uint8_t> k(1, 8, 3);
  for (auto& v : k.in) v = 50;
  const float xs[8] = {-0.01f, 8.f, std::nanf(""), 3.f, 7.99f, -1e9f, INFINITY, 0.f};
  const float ys[8] = {0.f, 0.f, 0.f, -0.001f, 0.f, 0.f, 0.f, 0.999f};
  for (int i = 0; i < 8; ++i) k.mx[size_t(i)] = xs[i], k.my[size_t(i)] = ys[i];
  for (auto interp : {RemapInterp::kNearest, RemapInterp::kLinear, RemapInterp::kCubic}) {
    const auto out = k.run(interp);
    for (int i = 0; i < 8; ++i)
      for (int ch = 0; ch < 3; ++ch)
        EXPECT_EQ(out[size_t(i * 3 + ch)], (i == 4 || i == 7) ? 50 : 0)
            << int(interp) << " point " << i;
  }
  // 'corner': map value 0 is x = -0.5, outside.
  k.mx.assign(8, 0.f), k.my.assign(8, 0.5f);
  for (auto v : k.run(RemapInterp::kLinear, -0.5f)) EXPECT_EQ(v, 0);
}

// Nearest rounds halves up and clamps a point in the last half pixel to the last column.
TEST(RemapCpu, NearestRoundsHalvesUp) {
  Case<float> k(2, 5, 1);
  for (int64_t x = 0; x < 10; ++x) k.in[size_t(x)] = float(x);
  const float xs[10] = {2.5f, 2.4999998f, 1.5f, 0.5f, 4.6f, 3.49f, 0.f, 4.5f, 2.51f, 1.2f};
  for (int i = 0; i < 10; ++i) k.mx[size_t(i)] = xs[i], k.my[size_t(i)] = i < 5 ? 0.4f : 0.5f;
  const auto out = k.run(RemapInterp::kNearest);
  const float expected[10] = {3, 2, 2, 1, 4, 8, 5, 9, 8, 6};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out[size_t(i)], expected[i]) << i;
}

// Linear: the fraction's weights, rows first; integer results rounded to nearest (halves away
// from zero) and saturated.
TEST(RemapCpu, LinearWeighsAndRounds) {
  Case<int16_t> k(2, 4, 1);
  const int16_t row0[4] = {0, -5, 5, 32767}, row1[4] = {10, 20, 0, -32768};
  for (int x = 0; x < 4; ++x) k.in[size_t(x)] = row0[x], k.in[size_t(4 + x)] = row1[x];
  const float xs[8] = {0.5f, 1.5f, 0.25f, 0.f, 2.5f, 3.f, 3.7f, 1.f};
  const float ys[8] = {0.f, 0.f, 0.f, 0.5f, 0.f, 0.5f, 0.f, 0.25f};
  for (int i = 0; i < 8; ++i) k.mx[size_t(i)] = xs[i], k.my[size_t(i)] = ys[i];
  const auto out = k.run(RemapInterp::kLinear);
  // -2.5 -> -3; 0; -1.25 -> -1; 5; (5 + 32767) / 2; (32767 - 32768) / 2 = -0.5 -> -1; the last
  // column's taps past the edge take it: 32767; -5 * 0.75 + 20 * 0.25 = 1.25 -> 1.
  const int16_t expected[8] = {-3, 0, -1, 5, 16386, -1, 32767, 1};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[size_t(i)], expected[i]) << i;
}

// Cubic is the Lagrange cubic: polynomials of degree 3 in x and in y are reproduced inside the
// image (to float rounding); uint8 results saturate.
TEST(RemapCpu, CubicReproducesCubics) {
  Case<float> k(8, 9, 1);
  auto f = [](double x, double y) {
    return 0.02 * x * x * x - 0.3 * x * x + x + 4 + 0.01 * y * y * y - 0.2 * y * x + y;
  };
  for (int64_t y = 0; y < k.h; ++y)
    for (int64_t x = 0; x < k.w; ++x) k.in[size_t(y * k.w + x)] = float(f(double(x), double(y)));
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> ux(1.f, 6.99f), uy(1.f, 5.99f);
  for (size_t p = 0; p < k.mx.size(); ++p) k.mx[p] = ux(rng), k.my[p] = uy(rng);
  const auto out = k.run(RemapInterp::kCubic);
  for (size_t p = 0; p < k.mx.size(); ++p)
    EXPECT_NEAR(out[p], f(k.mx[p], k.my[p]), 1e-3) << k.mx[p] << ", " << k.my[p];

  Case<uint8_t> e(1, 6, 1);
  const uint8_t step[6] = {0, 0, 255, 255, 0, 0};
  std::copy(step, step + 6, e.in.begin());
  // Halfway the weights are (-1, 9, 9, -1) / 16.
  e.mx = {1.5f, 2.5f, 3.5f, 0.5f, 4.5f, 2.f};
  const auto sat = e.run(RemapInterp::kCubic);
  EXPECT_EQ(sat[0], 128);  // 255 * (9 - 1) / 16 = 127.5, rounded up
  EXPECT_EQ(sat[1], 255);  // 255 * 18 / 16: saturated
  EXPECT_EQ(sat[2], 128);
  EXPECT_EQ(sat[3], 0);  // 255 * -1 / 16 (the first tap is the edge pixel): saturated
  EXPECT_EQ(sat[4], 0);
  EXPECT_EQ(sat[5], 255);
}

}  // namespace
}  // namespace stoker::kernels
