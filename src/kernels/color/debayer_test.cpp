#include "stoker/kernels/color/debayer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// OpenCV's Bayer2RGB_ loop written out slowly: rows 1..H-2 pair by pair, `blue` flipping each
// row, then the first and last columns and rows copied. RGB output.
template <typename T>
std::vector<T> ref_bilinear(const std::vector<T>& b, int H, int W, int pattern) {
  std::vector<T> out(size_t(H * W * 3), T(0));
  if (H <= 2 || W <= 2) return out;
  auto at = [&](int y, int x) { return int(b[size_t(y * W + x)]); };
  auto put = [&](int y, int x, int r, int g, int bl) {
    T* p = &out[size_t((y * W + x) * 3)];
    p[0] = T(r), p[1] = T(g), p[2] = T(bl);
  };
  // The colour of the tile's first pixel (1, 1): blue for BG, green for GB/GR, red for RG.
  for (int y = 1; y < H - 1; ++y)
    for (int x = 1; x < W - 1; ++x) {
      const int by = (1 + pattern / 2) % 2, bx = (1 + pattern % 2) % 2;
      const bool brow = y % 2 == by, bcol = x % 2 == bx;
      const int diag =
          (at(y - 1, x - 1) + at(y - 1, x + 1) + at(y + 1, x - 1) + at(y + 1, x + 1) + 2) >> 2;
      const int cross = (at(y - 1, x) + at(y + 1, x) + at(y, x - 1) + at(y, x + 1) + 2) >> 2;
      const int vert = (at(y - 1, x) + at(y + 1, x) + 1) >> 1;
      const int horz = (at(y, x - 1) + at(y, x + 1) + 1) >> 1;
      const int c = at(y, x);
      if (brow && bcol)
        put(y, x, diag, cross, c);  // blue
      else if (!brow && !bcol)
        put(y, x, c, cross, diag);  // red
      else if (brow)
        put(y, x, vert, c, horz);  // green in a blue row
      else
        put(y, x, horz, c, vert);  // green in a red row
    }
  for (int y = 1; y < H - 1; ++y)
    for (int c = 0; c < 3; ++c) {
      out[size_t((y * W) * 3 + c)] = out[size_t((y * W + 1) * 3 + c)];
      out[size_t((y * W + W - 1) * 3 + c)] = out[size_t((y * W + W - 2) * 3 + c)];
    }
  for (int k = 0; k < W * 3; ++k) {
    out[size_t(k)] = out[size_t(W * 3 + k)];
    out[size_t((H - 1) * W * 3 + k)] = out[size_t((H - 2) * W * 3 + k)];
  }
  return out;
}

// Bayer2Gray_: the bilinear means weighted 0.299, 0.587, 0.114 in OpenCV's fixed point.
template <typename T>
std::vector<T> ref_gray(const std::vector<T>& b, int H, int W, int pattern) {
  std::vector<T> out(size_t(H * W), T(0));
  if (H <= 2 || W <= 2) return out;
  auto at = [&](int y, int x) { return int64_t(b[size_t(y * W + x)]); };
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const int cy = std::clamp(y, 1, H - 2), cx = std::clamp(x, 1, W - 2);
      const int by = (1 + pattern / 2) % 2, bx = (1 + pattern % 2) % 2;
      const bool brow = cy % 2 == by, bcol = cx % 2 == bx;
      const int64_t diag =
          at(cy - 1, cx - 1) + at(cy - 1, cx + 1) + at(cy + 1, cx - 1) + at(cy + 1, cx + 1);
      const int64_t cross = at(cy - 1, cx) + at(cy + 1, cx) + at(cy, cx - 1) + at(cy, cx + 1);
      const int64_t vert = at(cy - 1, cx) + at(cy + 1, cx), horz = at(cy, cx - 1) + at(cy, cx + 1);
      const int64_t c = at(cy, cx);
      int64_t v;
      if (brow && bcol)
        v = (diag * 4899 + cross * 9617 + c * 4 * 1868 + (1 << 15)) >> 16;
      else if (!brow && !bcol)
        v = (diag * 1868 + cross * 9617 + c * 4 * 4899 + (1 << 15)) >> 16;
      else if (brow)
        v = (vert * 4899 + horz * 1868 + c * 2 * 9617 + (1 << 14)) >> 15;
      else
        v = (horz * 4899 + vert * 1868 + c * 2 * 9617 + (1 << 14)) >> 15;
      out[size_t(y * W + x)] = T(v);
    }
  return out;
}

template <typename T>
void check_all(int H, int W, int max_value, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, max_value);
  std::vector<T> in(size_t(H * W));
  for (auto& v : in) v = T(d(rng));
  for (int p = 0; p < 4; ++p) {
    std::vector<T> rgb(size_t(H * W * 3)), gray(size_t(H * W));
    debayer_cpu(in.data(), rgb.data(), {H, W}, p, DebayerAlgorithm::kBilinear);
    debayer_cpu(in.data(), gray.data(), {H, W}, p, DebayerAlgorithm::kGray);
    EXPECT_EQ(rgb, ref_bilinear(in, H, W, p)) << H << "x" << W << " pattern " << p;
    EXPECT_EQ(gray, ref_gray(in, H, W, p)) << H << "x" << W << " pattern " << p;
  }
}

TEST(DebayerCpu, FourPatternsBilinearAndGrayAsOpenCv) {
  check_all<uint8_t>(10, 14, 255, 1);
  check_all<uint8_t>(4, 4, 255, 2);
  check_all<uint16_t>(12, 6, 65535, 3);
  check_all<uint8_t>(2, 8, 255, 4);  // no inner pixels: zeros
  check_all<uint8_t>(8, 2, 255, 5);
}

TEST(DebayerCpu, PatternsPlaceBlueWhereDaliSays) {
  // A sensor whose blue pixels hold 200, red 50, green 100 comes out (50, 100, 200) everywhere.
  for (int p = 0; p < 4; ++p) {
    std::vector<uint8_t> in(36), out(108);
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 6; ++x) {
        const int c = bayer_colour(p, y, x);
        in[size_t(y * 6 + x)] = uint8_t(c == 2 ? 200 : c == 0 ? 50 : 100);
      }
    // blue_position (by, bx): blue at row 1 + by, column 1 + bx (mod 2).
    EXPECT_EQ(bayer_colour(p, 1 + p / 2, 1 + p % 2), 2);
    debayer_cpu(in.data(), out.data(), {6, 6}, p, DebayerAlgorithm::kBilinear);
    for (size_t k = 0; k < out.size(); k += 3)
      EXPECT_EQ((std::vector<int>{out[k], out[k + 1], out[k + 2]}),
                (std::vector<int>{50, 100, 200}));
  }
}

}  // namespace
}  // namespace stoker::kernels
