#include "stoker/kernels/color/clahe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// OpenCV's CLAHE written out slowly for one plane: an explicitly padded copy (reflect 101) for
// the tables, then the bilinear blend per pixel.
std::vector<uint8_t> ref_clahe(const std::vector<uint8_t>& img, int H, int W, int tx, int ty,
                               double clip_limit) {
  int eh = H, ew = W;
  if (H % ty || W % tx) eh = H + ty - H % ty, ew = W + tx - W % tx;
  auto refl = [](int p, int n) {
    if (n == 1) return 0;
    while (p < 0 || p >= n) p = p < 0 ? -p : 2 * n - p - 2;
    return p;
  };
  std::vector<uint8_t> ext(size_t(eh * ew));
  for (int y = 0; y < eh; ++y)
    for (int x = 0; x < ew; ++x) ext[size_t(y * ew + x)] = img[size_t(refl(y, H) * W + refl(x, W))];
  const int th = eh / ty, tw = ew / tx, area = th * tw;
  int clip = 0;
  if (clip_limit > 0) clip = std::max(1, int(clip_limit * area / 256));
  const float scale = 255.f / float(area);
  std::vector<uint8_t> lut(size_t(tx * ty * 256));
  for (int j = 0; j < ty; ++j)
    for (int i = 0; i < tx; ++i) {
      std::vector<int> h(256);
      for (int y = j * th; y < (j + 1) * th; ++y)
        for (int x = i * tw; x < (i + 1) * tw; ++x) ++h[ext[size_t(y * ew + x)]];
      if (clip > 0) {
        int clipped = 0;
        for (auto& v : h)
          if (v > clip) clipped += v - clip, v = clip;
        const int batch = clipped / 256;
        int residual = clipped - batch * 256;
        for (auto& v : h) v += batch;
        const int step = std::max(256 / std::max(residual, 1), 1);
        for (int k = 0; k < 256 && residual > 0; k += step, --residual) ++h[size_t(k)];
      }
      int sum = 0;
      for (int k = 0; k < 256; ++k) {
        sum += h[size_t(k)];
        lut[size_t((j * tx + i) * 256 + k)] =
            uint8_t(std::clamp(std::nearbyint(float(sum) * scale), 0.f, 255.f));
      }
    }
  std::vector<uint8_t> out(img.size());
  for (int y = 0; y < H; ++y) {
    const float tyf = float(y) * (1.f / float(th)) - 0.5f;
    int t1 = int(std::floor(tyf)), t2 = t1 + 1;
    const float ya = tyf - float(t1);
    t1 = std::max(t1, 0), t2 = std::min(t2, ty - 1);
    for (int x = 0; x < W; ++x) {
      const float txf = float(x) * (1.f / float(tw)) - 0.5f;
      int s1 = int(std::floor(txf)), s2 = s1 + 1;
      const float xa = txf - float(s1);
      s1 = std::max(s1, 0), s2 = std::min(s2, tx - 1);
      const int v = img[size_t(y * W + x)];
      auto L = [&](int j, int i) { return float(lut[size_t((j * tx + i) * 256 + v)]); };
      const float res = (L(t1, s1) * (1.f - xa) + L(t1, s2) * xa) * (1.f - ya) +
                        (L(t2, s1) * (1.f - xa) + L(t2, s2) * xa) * ya;
      out[size_t(y * W + x)] = uint8_t(std::clamp(std::nearbyint(res), 0.f, 255.f));
    }
  }
  return out;
}

TEST(ClaheCpu, GrayAndPerChannelAsOpenCv) {
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(110.f, 35.f);
  struct Case {
    int H, W, C, tx, ty;
    double clip;
  };
  for (Case c : {Case{64, 48, 1, 4, 4, 2.0}, Case{37, 53, 1, 3, 5, 1.5}, Case{64, 48, 3, 3, 5, 3.0},
                 Case{30, 40, 1, 8, 8, 0.0}, Case{7, 9, 2, 7, 3, 40.0}, Case{1, 1, 1, 1, 1, 2.0},
                 Case{5, 6, 1, 5, 5, 1.0}}) {
    std::vector<uint8_t> in(size_t(c.H * c.W * c.C)), out(in.size());
    for (auto& v : in) v = uint8_t(std::clamp(nd(rng), 0.f, 255.f));
    const ClaheGeometry g = clahe_geometry(c.H, c.W, c.tx, c.ty, c.clip);
    std::vector<uint8_t> luts(size_t(c.tx * c.ty * 256));
    clahe_cpu(in.data(), out.data(), c.H, c.W, c.C, false, g, luts.data(), nullptr);
    for (int ch = 0; ch < c.C; ++ch) {
      std::vector<uint8_t> plane, got;
      for (int k = 0; k < c.H * c.W; ++k)
        plane.push_back(in[size_t(k * c.C + ch)]), got.push_back(out[size_t(k * c.C + ch)]);
      EXPECT_EQ(got, ref_clahe(plane, c.H, c.W, c.tx, c.ty, c.clip))
          << c.H << "x" << c.W << "x" << c.C << " tiles " << c.tx << "x" << c.ty;
    }
  }
}

TEST(ClaheCpu, LumaKeepsGrayGrayAndLabRoundTrips) {
  // Gray RGB pixels have a* = b* = 128 (0) and come back gray; L* of 0 and 255 are black and
  // white.
  for (int v = 0; v < 256; v += 5) {
    const uint8_t rgb[3] = {uint8_t(v), uint8_t(v), uint8_t(v)};
    uint8_t lab[3], back[3];
    rgb_to_lab8(rgb, lab, lab_tables());
    EXPECT_EQ(lab[1], 128);
    EXPECT_EQ(lab[2], 128);
    lab8_to_rgb(lab, back);
    EXPECT_NEAR(back[0], v, 1);
    EXPECT_EQ(back[0], back[1]);
    EXPECT_EQ(back[1], back[2]);
  }
  // An RGB image of gray pixels through luma equals the gray image's CLAHE within 1 level.
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> d(30, 220);
  const int H = 24, W = 20;
  std::vector<uint8_t> gray(size_t(H * W)), rgb, out(size_t(H * W * 3)), plane(size_t(H * W));
  for (auto& v : gray) v = uint8_t(d(rng));
  for (auto v : gray) rgb.insert(rgb.end(), {v, v, v});
  const ClaheGeometry g = clahe_geometry(H, W, 2, 3, 2.0);
  std::vector<uint8_t> luts(6 * 256);
  clahe_cpu(rgb.data(), out.data(), H, W, 3, true, g, luts.data(), plane.data());
  for (int k = 0; k < H * W; ++k) {
    EXPECT_EQ(out[size_t(3 * k)], out[size_t(3 * k + 1)]);
    EXPECT_EQ(out[size_t(3 * k)], out[size_t(3 * k + 2)]);
  }
}

}  // namespace
}  // namespace stoker::kernels
