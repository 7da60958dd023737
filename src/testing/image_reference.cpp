#include "stoker/testing/image_reference.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace stoker::testing {

std::vector<uint8_t> random_image_u8(int64_t h, int64_t w, int64_t c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> phase(0, 6.28), noise(-30, 30);
  std::vector<double> ph(size_t(c) * 2);
  for (auto& p : ph) p = phase(rng);
  std::vector<uint8_t> img(size_t(h * w * c));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k) {
        double v = 128 +
                   70 * std::sin(0.21 * double(x) + ph[size_t(2 * k)]) *
                       std::cos(0.13 * double(y) + ph[size_t(2 * k + 1)]) +
                   noise(rng);
        img[size_t((y * w + x) * c + k)] = uint8_t(std::clamp(v, 0.0, 255.0));
      }
  return img;
}

RefImage to_ref(const uint8_t* data, int64_t h, int64_t w, int64_t c, int64_t row_stride) {
  RefImage r{h, w, c, std::vector<double>(size_t(h * w * c))};
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k) r.at(y, x, k) = data[y * row_stride + x * c + k];
  return r;
}

namespace {
double triangle_tap(int64_t src, int64_t dst, int64_t in, int64_t out, bool antialias) {
  double scale = double(in) / double(out);
  double radius = (antialias && scale > 1) ? scale : 1.0;
  double d = std::fabs((double(src) + 0.5) - (double(dst) + 0.5) * scale) / radius;
  return std::max(0.0, 1.0 - d);
}
}  // namespace

RefImage resize_linear_reference(const RefImage& in, int64_t out_h, int64_t out_w, bool antialias) {
  RefImage out{out_h, out_w, in.channels, std::vector<double>(size_t(out_h * out_w * in.channels))};
  for (int64_t y = 0; y < out_h; ++y)
    for (int64_t x = 0; x < out_w; ++x)
      for (int64_t c = 0; c < in.channels; ++c) {
        double num = 0, den = 0;
        for (int64_t sy = 0; sy < in.height; ++sy) {
          double wy = triangle_tap(sy, y, in.height, out_h, antialias);
          if (wy == 0) continue;
          for (int64_t sx = 0; sx < in.width; ++sx) {
            double w = wy * triangle_tap(sx, x, in.width, out_w, antialias);
            num += w * in.at(sy, sx, c);
            den += w;
          }
        }
        out.at(y, x, c) = num / den;
      }
  return out;
}

RefImage normalize_reference(const RefImage& in, const std::vector<double>& mean,
                             const std::vector<double>& stddev, double scale, double shift,
                             bool mirror) {
  RefImage out = in;
  for (int64_t y = 0; y < in.height; ++y)
    for (int64_t x = 0; x < in.width; ++x)
      for (int64_t c = 0; c < in.channels; ++c) {
        double v = in.at(y, mirror ? in.width - 1 - x : x, c);
        out.at(y, x, c) = (v - mean[size_t(c)]) / stddev[size_t(c)] * scale + shift;
      }
  return out;
}

uint8_t round_u8(double v) { return uint8_t(std::clamp(std::round(v), 0.0, 255.0)); }

}  // namespace stoker::testing
