#include "stoker/kernels/geometry/orient_cpu.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

struct Image {
  int64_t h, w, c;
  std::vector<uint8_t> px;
  uint8_t at(int64_t y, int64_t x, int64_t k) const { return px[size_t((y * w + x) * c + k)]; }
};

// The reference composes three primitive moves, as the EXIF spec words them.
Image flip_h(const Image& a) {
  Image b = a;
  for (int64_t y = 0; y < a.h; ++y)
    for (int64_t x = 0; x < a.w; ++x)
      for (int64_t k = 0; k < a.c; ++k)
        b.px[size_t((y * a.w + x) * a.c + k)] = a.at(y, a.w - 1 - x, k);
  return b;
}
Image flip_v(const Image& a) {
  Image b = a;
  for (int64_t y = 0; y < a.h; ++y)
    for (int64_t x = 0; x < a.w; ++x)
      for (int64_t k = 0; k < a.c; ++k)
        b.px[size_t((y * a.w + x) * a.c + k)] = a.at(a.h - 1 - y, x, k);
  return b;
}
Image transpose(const Image& a) {
  Image b{a.w, a.h, a.c, a.px};
  for (int64_t y = 0; y < b.h; ++y)
    for (int64_t x = 0; x < b.w; ++x)
      for (int64_t k = 0; k < a.c; ++k) b.px[size_t((y * b.w + x) * a.c + k)] = a.at(x, y, k);
  return b;
}
Image rotate_cw(const Image& a) { return flip_h(transpose(a)); }

Image reference(const Image& a, int o) {
  switch (o) {
    case 2:
      return flip_h(a);  // mirror horizontal
    case 3:
      return flip_v(flip_h(a));  // rotate 180
    case 4:
      return flip_v(a);  // mirror vertical
    case 5:
      return rotate_cw(rotate_cw(rotate_cw(flip_h(a))));  // mirror h. + rotate 270 CW
    case 6:
      return rotate_cw(a);  // rotate 90 CW
    case 7:
      return rotate_cw(flip_h(a));  // mirror horizontal + rotate 90 CW
    case 8:
      return rotate_cw(rotate_cw(rotate_cw(a)));  // rotate 270 CW
    default:
      return a;
  }
}

TEST(OrientCpu, EveryOrientationMatchesComposedFlipsAndRotations) {
  std::mt19937 rng(5);
  for (auto [h, w, c] : {std::tuple{1, 1, 1}, {3, 5, 3}, {4, 2, 1}, {7, 6, 2}, {1, 9, 4}}) {
    Image a{h, w, c, std::vector<uint8_t>(size_t(h * w * c))};
    for (auto& v : a.px) v = uint8_t(rng());
    for (int o = 1; o <= 8; ++o) {
      auto expect = reference(a, o);
      std::vector<uint8_t> got(a.px.size());
      orient_cpu(a.px.data(), h, w, c, o, got.data());
      EXPECT_EQ(got, expect.px) << "orientation " << o << " size " << h << "x" << w << "x" << c;
    }
  }
}

}  // namespace
}  // namespace stoker::kernels
