#include "stoker/kernels/resize/resize_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "stoker/testing/image_reference.hpp"

namespace stoker::kernels {
namespace {

using testing::RefImage;

struct ResizeCase {
  int64_t in_h, in_w, out_h, out_w;
  bool antialias;
};

void PrintTo(const ResizeCase& c, std::ostream* os) {
  *os << c.in_h << "x" << c.in_w << "->" << c.out_h << "x" << c.out_w
      << (c.antialias ? " antialias" : "");
}

class ResizeLinear : public ::testing::TestWithParam<ResizeCase> {};

// u8 -> u8 within 1 of the rounded double reference; u8 -> f32 within 1e-3.
TEST_P(ResizeLinear, MatchesReference) {
  auto p = GetParam();
  const int64_t C = 3;
  auto src = testing::random_image_u8(p.in_h, p.in_w, C, uint32_t(p.in_h * 31 + p.out_w));
  auto ref = testing::resize_linear_reference(
      testing::to_ref(src.data(), p.in_h, p.in_w, C, p.in_w * C), p.out_h, p.out_w, p.antialias);
  std::vector<float> scratch;
  std::vector<uint8_t> out_u8(size_t(p.out_h * p.out_w * C), 0xcd);
  resize_linear_cpu<uint8_t, uint8_t>(dense_image(out_u8.data(), p.out_h, p.out_w, C),
                                      dense_image<const uint8_t>(src.data(), p.in_h, p.in_w, C),
                                      p.antialias, scratch);
  std::vector<float> out_f(size_t(p.out_h * p.out_w * C), NAN);
  resize_linear_cpu<float, uint8_t>(dense_image(out_f.data(), p.out_h, p.out_w, C),
                                    dense_image<const uint8_t>(src.data(), p.in_h, p.in_w, C),
                                    p.antialias, scratch);
  for (size_t i = 0; i < out_u8.size(); ++i) {
    ASSERT_LE(std::abs(int(out_u8[i]) - int(testing::round_u8(ref.data[i]))), 1) << i;
    ASSERT_NEAR(out_f[i], ref.data[i], 1e-3) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ResizeLinear,
    ::testing::Values(ResizeCase{20, 30, 40, 45, true},    // upscale
                      ResizeCase{37, 53, 11, 17, true},    // downscale, antialiased
                      ResizeCase{37, 53, 11, 17, false},   // downscale, plain bilinear
                      ResizeCase{16, 16, 16, 16, true},    // identity
                      ResizeCase{1, 9, 5, 3, true},        // degenerate height
                      ResizeCase{64, 48, 23, 61, true},    // mixed
                      ResizeCase{300, 420, 5, 6, true}));  // > 64 taps per output pixel

TEST(ResizeLinearWindow, CropWindowIsResizedAlone) {
  // Resizing a window must see only the window's pixels (crop-then-resize semantics).
  const int64_t H = 30, W = 40, C = 3;
  auto src = testing::random_image_u8(H, W, C, 3);
  auto full = dense_image<const uint8_t>(src.data(), H, W, C);
  auto win = full.window(5, 7, 12, 19);
  auto ref = testing::resize_linear_reference(testing::to_ref(win.data, 12, 19, C, win.row_stride),
                                              9, 8, true);
  std::vector<float> scratch;
  std::vector<float> out(9 * 8 * C);
  resize_linear_cpu<float, uint8_t>(dense_image(out.data(), 9, 8, C), win, true, scratch);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref.data[i], 1e-3);
}

TEST(ResampleWeights, RejectsEmptyExtents) {
  try {
    linear_resample_weights(0, 5, true);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "cannot resample 0 to 5 pixels: extents must be positive");
  }
}

}  // namespace
}  // namespace stoker::kernels

namespace stoker::kernels {
namespace {

// Every filter against a double-precision reference written from the formulas (independent
// of resample_weights): 1-D weights per output pixel, normalised over the taps inside.
double ref_filter(Filter f, double x) {
  x = std::fabs(x);
  const double pi = 3.14159265358979323846;
  auto sinc = [&](double v) { return v == 0 ? 1.0 : std::sin(pi * v) / (pi * v); };
  switch (f) {
    case Filter::kCubic:  // Keys, a = -0.5
      return x < 1   ? 1.5 * x * x * x - 2.5 * x * x + 1
             : x < 2 ? -0.5 * x * x * x + 2.5 * x * x - 4 * x + 2
                     : 0;
    case Filter::kLanczos3:
      return x < 3 ? sinc(x) * sinc(x / 3) : 0;
    default:
      return x < 1 ? 1 - x : 0;
  }
}

// The region [lo, hi) (hi < lo: flipped; default the whole source) sampled at out points.
std::vector<std::vector<double>> ref_weights(int64_t in, int64_t out, Filter f, bool aa,
                                             double lo = 0, double hi = -1) {
  if (hi < 0 && lo == 0) hi = double(in);
  const double step = (hi - lo) / double(out), scale = std::fabs(step);
  const double s = aa && scale > 1 ? scale : 1;
  std::vector<std::vector<double>> w(size_t(out), std::vector<double>(size_t(in), 0));
  for (int64_t i = 0; i < out; ++i) {
    const double c = lo + (double(i) + 0.5) * step;
    double sum = 0;
    for (int64_t j = 0; j < in; ++j)
      sum += w[size_t(i)][size_t(j)] = ref_filter(f, (j + 0.5 - c) / s);
    for (auto& v : w[size_t(i)]) v /= sum;
  }
  return w;
}

TEST(ResizeFilters, EveryFilterMatchesTheFormula) {
  for (Filter f : {Filter::kLinear, Filter::kCubic, Filter::kLanczos3}) {
    for (auto [ih, iw, oh, ow, aa] : {std::tuple{17, 23, 7, 31, true},
                                      {17, 23, 7, 31, false},
                                      {5, 40, 12, 9, true},
                                      {30, 30, 30, 30, true}}) {
      const int64_t C = 2;
      std::vector<float> src(size_t(ih * iw * C));
      for (size_t k = 0; k < src.size(); ++k) src[k] = float((k * 7919) % 251);
      std::vector<float> out(size_t(oh * ow * C)), scratch;
      resize_cpu<float, float>(dense_image(out.data(), oh, ow, C),
                               dense_image<const float>(src.data(), ih, iw, C), f, aa, scratch);
      auto wy = ref_weights(ih, oh, f, aa), wx = ref_weights(iw, ow, f, aa);
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t c = 0; c < C; ++c) {
            double v = 0;
            for (int64_t sy = 0; sy < ih; ++sy)
              for (int64_t sx = 0; sx < iw; ++sx)
                v += wy[size_t(y)][size_t(sy)] * wx[size_t(x)][size_t(sx)] *
                     src[size_t((sy * iw + sx) * C + c)];
            ASSERT_NEAR(out[size_t((y * ow + x) * C + c)], v, 2e-3 * (1 + std::abs(v)))
                << int(f) << " " << ih << "x" << iw << "->" << oh << "x" << ow;
          }
    }
  }
}

// A region of interest: fractional, flipped, reaching past the image's edge; the filter reads
// pixels around the region (a sampling grid, not a crop). Compared with the formula, and the
// horizontal pass covers only the rows the region needs.
TEST(ResizeFilters, RegionOfInterestMatchesTheFormula) {
  const int64_t ih = 19, iw = 26, C = 3;
  std::vector<float> src(size_t(ih * iw * C));
  for (size_t k = 0; k < src.size(); ++k) src[k] = float((k * 7919) % 251);
  for (Filter f : {Filter::kLinear, Filter::kCubic, Filter::kLanczos3}) {
    for (auto [roi, oh, ow] : {std::tuple{ResizeRoi{2.5, 11.25, 3.0, 20.5}, 13, 9},
                               {ResizeRoi{18.0, 1.0, 0.0, 26.0}, 6, 26},      // flipped in y
                               {ResizeRoi{4.0, 8.0, 25.0, 5.0}, 16, 40},      // flipped in x
                               {ResizeRoi{10.0, 19.0, 13.0, 26.0}, 5, 5}}) {  // bottom right
      std::vector<float> out(size_t(oh * ow * C)), scratch;
      resize_cpu<float, float>(dense_image(out.data(), oh, ow, C),
                               dense_image<const float>(src.data(), ih, iw, C), f, true, scratch,
                               roi);
      auto wy = ref_weights(ih, oh, f, true, roi.y0, roi.y1);
      auto wx = ref_weights(iw, ow, f, true, roi.x0, roi.x1);
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t c = 0; c < C; ++c) {
            double v = 0;
            for (int64_t sy = 0; sy < ih; ++sy)
              for (int64_t sx = 0; sx < iw; ++sx)
                v += wy[size_t(y)][size_t(sy)] * wx[size_t(x)][size_t(sx)] *
                     src[size_t((sy * iw + sx) * C + c)];
            ASSERT_NEAR(out[size_t((y * ow + x) * C + c)], v, 2e-3 * (1 + std::abs(v)))
                << int(f) << " roi " << roi.y0 << ".." << roi.y1 << " x " << roi.x0 << ".."
                << roi.x1;
          }
    }
  }
  // Centres beyond the image take the edge pixel (no zero weights, no NaN).
  auto w = resample_weights(10, 4, Filter::kLinear, true, 20.0, 40.0);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(w.first[size_t(i)], 9);
    EXPECT_EQ(w.weights[size_t(i) * size_t(w.support)], 1.f);
  }
  EXPECT_THROW(resample_weights(10, 4, Filter::kLinear, true, 3.0, 3.0), ValueError);
}

// DALI's Gaussian, written from its description: exp(-x^2) over x in [-2, 2] spread over 2R
// source pixels (sigma = R / (2 sqrt 2); R = the scale antialiased, else 1), which DALI's table
// ends with a ramp to 0 over 1/16 more; ceil(2R) taps from the first pixel at or after the
// window's start, taps past the image on the edge pixel. stoker reads DALI's table of 65
// values, which interpolation makes at most ~1e-3 off the curve.
TEST(ResizeFilters, GaussianIsDalisFilter) {
  for (auto [in, out, aa, lo, hi] : {std::tuple{20, 47, true, 0.0, 20.0},
                                     {47, 20, true, 0.0, 47.0},
                                     {47, 20, false, 0.0, 47.0},
                                     {30, 7, true, 2.5, 27.25},
                                     {30, 11, true, 25.0, 3.0}}) {  // flipped
    SCOPED_TRACE(::testing::Message()
                 << in << "->" << out << " aa " << aa << " [" << lo << ", " << hi << ")");
    const double step = (hi - lo) / out, r = aa && std::fabs(step) > 1 ? std::fabs(step) : 1.0;
    const int64_t taps = int64_t(std::ceil(2 * r));
    auto w = resample_weights(in, out, Filter::kGaussian, aa, lo, hi);
    ASSERT_EQ(w.support, std::min<int64_t>(taps, in));
    for (int64_t i = 0; i < out; ++i) {
      const double c = lo + (i + 0.5) * step;  // the window is [c - r, c + r)
      const auto first = int64_t(std::ceil(c - r - 0.5));
      std::vector<double> ref(size_t(in), 0.0);
      double sum = 0;
      for (int64_t k = 0; k < taps; ++k) {
        const double x = std::fabs(double(first + k) + 0.5 - c) * 2 / r;
        const double f =
            x <= 2 ? std::exp(-x * x) : std::max(0.0, 1 - (x - 2) * 16) * std::exp(-4.0);
        ref[size_t(std::clamp<int64_t>(first + k, 0, in - 1))] += f;
        sum += f;
      }
      double got_sum = 0;
      for (int64_t j = 0; j < in; ++j) {
        const int64_t k = j - w.first[size_t(i)];
        const double got =
            k >= 0 && k < w.count[size_t(i)] ? w.weights[size_t(i * w.support + k)] : 0.0;
        got_sum += got;
        EXPECT_NEAR(got, ref[size_t(j)] / sum, 2e-3) << "output " << i << " pixel " << j;
      }
      EXPECT_NEAR(got_sum, 1.0, 1e-5) << "output " << i;
    }
  }
}

// Where the window starts on a whole pixel (an axis kept at its size), DALI's float arithmetic
// decides: its width 2R comes out 1.9999999, so the start lies a hair past the pixel, then
// rounds onto it from output pixel 3 on. Measured with DALI 2.4 (test_parity_image_ops.py): the
// first three pixels lean right, the others left.
TEST(ResizeFilters, GaussianKeepsDalisFloatRounding) {
  auto w = resample_weights(9, 9, Filter::kGaussian, true);
  for (int64_t i = 0; i < 9; ++i) {
    SCOPED_TRACE(::testing::Message() << "output " << i);
    const bool right = i < 3;
    ASSERT_EQ(w.count[size_t(i)], 2);
    EXPECT_EQ(w.first[size_t(i)], right ? i : i - 1);
    EXPECT_NEAR(w.weights[size_t(i) * size_t(w.support)], right ? 0.98201 : 0.01799, 1e-5);
  }
}

TEST(ResizeFilters, NearestPicksFloorOfTheCentreAndNamesParse) {
  auto w = resample_weights(30, 45, Filter::kNearest, true);
  for (int64_t i = 0; i < 45; ++i)
    EXPECT_EQ(w.first[size_t(i)], int64_t(std::floor((i + 0.5) * 30.0 / 45.0)));
  EXPECT_EQ(parse_filter("INTERP_TRIANGULAR"), Filter::kLinear);
  EXPECT_EQ(parse_filter("Lanczos3"), Filter::kLanczos3);
  EXPECT_THROW(parse_filter("bicubic"), ValueError);
}

}  // namespace
}  // namespace stoker::kernels

namespace stoker::kernels {
namespace {

// 8-bit RGB takes SSE2 loops (resize_cpu_rows.cpp) that must give the generic loops' floats:
// each channel resized alone (one channel: the generic loops) is compared bit for bit, for
// widths around the 4-pixel groups, up- and downscaling, every filter (cubic and lanczos have
// negative weights), flipped regions of interest and a window with a row stride.
void check_fast_path_gives_the_generic_loops_floats();
void check_row_rounding();

TEST(ResizeRgb8, FastPathGivesTheGenericLoopsFloats) {
  check_fast_path_gives_the_generic_loops_floats();
}

TEST(ResizeRgb8, Sse2PathGivesTheGenericLoopsFloats) {  // on CPUs with AVX2 too
  const bool was = resize_detail::allow_avx2(false);
  check_fast_path_gives_the_generic_loops_floats();
  resize_detail::allow_avx2(was);
}

void check_fast_path_gives_the_generic_loops_floats() {
  struct Case {
    int64_t h, w, oh, ow;
    Filter filter;
    bool antialias;
    ResizeRoi roi;
  };
  const std::vector<Case> cases{{7, 1, 5, 1, Filter::kLinear, true, {0, 7, 0, 1}},
                                {9, 3, 4, 2, Filter::kLinear, true, {0, 9, 0, 3}},
                                {40, 61, 17, 23, Filter::kLinear, true, {0, 40, 0, 61}},
                                {40, 61, 90, 127, Filter::kLinear, false, {0, 40, 0, 61}},
                                {33, 50, 21, 29, Filter::kCubic, true, {2.5, 30, 49.5, 3}},
                                {33, 50, 45, 13, Filter::kLanczos3, true, {0, 33, 0, 50}},
                                {20, 24, 9, 8, Filter::kGaussian, true, {0, 20, 0, 24}},
                                {20, 24, 9, 8, Filter::kNearest, false, {0, 20, 0, 24}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.h << "x" << c.w << "->" << c.oh << "x" << c.ow);
    // A window of a wider image: rows are `stride` bytes apart, not w * 3.
    const int64_t stride = (c.w + 5) * 3;
    auto big = testing::random_image_u8(c.h, c.w + 5, 3, uint32_t(c.h * 7 + c.ow));
    ImageView<const uint8_t> in{big.data() + 6, c.h, c.w, 3, stride};
    std::vector<float> rgb(size_t(c.oh * c.ow * 3)), scratch;
    resize_cpu<float, uint8_t>(dense_image(rgb.data(), c.oh, c.ow, 3), in, c.filter, c.antialias,
                               scratch, c.roi);
    for (int ch = 0; ch < 3; ++ch) {
      std::vector<uint8_t> plane(size_t(c.h * c.w));
      for (int64_t y = 0; y < c.h; ++y)
        for (int64_t x = 0; x < c.w; ++x) plane[size_t(y * c.w + x)] = in.at(y, x, ch);
      std::vector<float> one(size_t(c.oh * c.ow));
      resize_cpu<float, uint8_t>(dense_image(one.data(), c.oh, c.ow, 1),
                                 dense_image<const uint8_t>(plane.data(), c.h, c.w, 1), c.filter,
                                 c.antialias, scratch, c.roi);
      for (size_t i = 0; i < one.size(); ++i) ASSERT_EQ(rgb[i * 3 + size_t(ch)], one[i]) << i;
    }
  }
}

TEST(ResizeRgb8, RowRoundingMatchesConvertSat) {
  for (bool avx2 : {true, false}) {
    const bool was = resize_detail::allow_avx2(avx2);
    check_row_rounding();
    resize_detail::allow_avx2(was);
  }
}

void check_row_rounding() {
  std::vector<float> v{NAN,         INFINITY, -INFINITY,  -1e9f,  1e9f,         -0.5f, 0.5f,
                       0.49999997f, 254.5f,   255.49998f, 255.5f, -0.50000006f, 1.5f,  2.5f};
  for (int i = 0; i < 1000; ++i) v.push_back(-20.f + 0.3f * float(i));  // 16-wide and the tail
  std::vector<uint8_t> out(v.size());
  resize_detail::round_sat_u8(v.data(), out.data(), int64_t(v.size()));
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(out[i], convert_sat<uint8_t>(v[i])) << v[i];
}

}  // namespace
}  // namespace stoker::kernels
