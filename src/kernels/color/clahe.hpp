// Contrast-limited adaptive histogram equalization of 8-bit images (DALI's fn.clahe), as
// OpenCV's CLAHE, which DALI's CPU operator calls:
// * the image is cut into tiles_x x tiles_y tiles of (W + pad) / tiles_x x (H + pad) / tiles_y
//   pixels, where pad makes the sides multiples of the tile counts, the padding rows and columns
//   mirrored (BORDER_REFLECT_101) for the tables only;
// * each tile's 256-bin histogram is clipped at max(1, int(clip_limit * area / 256)) (clip_limit
//   > 0), the excess spread evenly and its remainder one count every 256 / remainder bins from
//   bin 0; the table is cvRound(float(cumulative count) * (255.f / area));
// * each pixel blends the tables of its four nearest tile centres bilinearly, in float, rounded
//   half to even.
// Float operations go through mul_rn/add_rn so that the GPU (which would fuse them) computes
// exactly what the CPU does. RGB images with luma_only work on CIE L* (rgb_to_lab8, lab8_to_rgb).
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

struct ClaheGeometry {
  int tiles_x = 1, tiles_y = 1;
  int64_t tile_w = 1, tile_h = 1;
  int clip = 0;           // 0: no clipping
  float lut_scale = 1.f;  // 255 / tile area
  float inv_tw = 1.f, inv_th = 1.f;
};

// The geometry of an H x W image (H, W >= 1; 1 <= tiles_x <= W, 1 <= tiles_y <= H).
inline ClaheGeometry clahe_geometry(int64_t H, int64_t W, int tiles_x, int tiles_y,
                                    double clip_limit) {
  ClaheGeometry g;
  g.tiles_x = tiles_x, g.tiles_y = tiles_y;
  // OpenCV pads both sides when either is not a multiple of its tile count: a side that is
  // gets a whole tile more.
  const bool pad = W % tiles_x != 0 || H % tiles_y != 0;
  const int64_t ext_w = pad ? W + tiles_x - W % tiles_x : W;
  const int64_t ext_h = pad ? H + tiles_y - H % tiles_y : H;
  g.tile_w = ext_w / tiles_x, g.tile_h = ext_h / tiles_y;
  const int64_t area = g.tile_w * g.tile_h;
  g.lut_scale = 255.f / float(area);
  if (clip_limit > 0) {
    g.clip = int(clip_limit * double(area) / 256);
    if (g.clip < 1) g.clip = 1;
  }
  g.inv_tw = 1.f / float(g.tile_w), g.inv_th = 1.f / float(g.tile_h);
  return g;
}

// OpenCV's BORDER_REFLECT_101 index (any p; len >= 1).
STOKER_HOST_DEVICE inline int64_t reflect101(int64_t p, int64_t len) {
  if (len == 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p : 2 * len - p - 2;
  return p;
}

STOKER_HOST_DEVICE inline uint8_t round_u8(float v) {
  // cvRound (half to even) saturated, through 1.5 * 2^23 (|v| far below 2^22 here).
  const float r = add_rn(add_rn(v, 12582912.f), -12582912.f);
  return uint8_t(r <= 0.f ? 0 : r >= 255.f ? 255 : int(r));
}

// A tile's table from its histogram (changed in place: clipped and redistributed).
STOKER_HOST_DEVICE inline void clahe_tile_lut(uint32_t* hist, const ClaheGeometry& g,
                                              uint8_t* lut) {
  if (g.clip > 0) {
    int64_t clipped = 0;
    for (int i = 0; i < 256; ++i)
      if (int64_t(hist[i]) > g.clip) clipped += hist[i] - uint32_t(g.clip), hist[i] = g.clip;
    const int64_t batch = clipped / 256;
    int64_t residual = clipped - batch * 256;
    for (int i = 0; i < 256; ++i) hist[i] += uint32_t(batch);
    if (residual != 0) {
      const int64_t step = 256 / residual > 1 ? 256 / residual : 1;
      for (int64_t i = 0; i < 256 && residual > 0; i += step, --residual) ++hist[i];
    }
  }
  int32_t sum = 0;
  for (int i = 0; i < 256; ++i) {
    sum += int32_t(hist[i]);
    lut[i] = round_u8(mul_rn(float(sum), g.lut_scale));
  }
}

// Pixel (y, x) of value v through the tables (`luts`: tiles_y x tiles_x x 256).
STOKER_HOST_DEVICE inline uint8_t clahe_pixel(const uint8_t* luts, const ClaheGeometry& g,
                                              int64_t y, int64_t x, uint8_t v) {
  const float tyf = add_rn(mul_rn(float(y), g.inv_th), -0.5f);
  int64_t ty1 = int64_t(floorf(tyf));
  int64_t ty2 = ty1 + 1;
  const float ya = add_rn(tyf, -float(ty1)), ya1 = add_rn(1.f, -ya);
  ty1 = ty1 < 0 ? 0 : ty1, ty2 = ty2 > g.tiles_y - 1 ? g.tiles_y - 1 : ty2;
  const float txf = add_rn(mul_rn(float(x), g.inv_tw), -0.5f);
  int64_t tx1 = int64_t(floorf(txf));
  int64_t tx2 = tx1 + 1;
  const float xa = add_rn(txf, -float(tx1)), xa1 = add_rn(1.f, -xa);
  tx1 = tx1 < 0 ? 0 : tx1, tx2 = tx2 > g.tiles_x - 1 ? g.tiles_x - 1 : tx2;
  const uint8_t* p1 = luts + ty1 * g.tiles_x * 256;
  const uint8_t* p2 = luts + ty2 * g.tiles_x * 256;
  const float top =
      add_rn(mul_rn(float(p1[tx1 * 256 + v]), xa1), mul_rn(float(p1[tx2 * 256 + v]), xa));
  const float bottom =
      add_rn(mul_rn(float(p2[tx1 * 256 + v]), xa1), mul_rn(float(p2[tx2 * 256 + v]), xa));
  return round_u8(add_rn(mul_rn(top, ya1), mul_rn(bottom, ya)));
}

// ---- CIE L*a*b* of 8-bit sRGB (D65) for luma_only. RGB to Lab as OpenCV's 8-bit conversion, in
// its fixed point (equal to DALI's on every value tried): each channel through a gamma table
// (255 * 8 * sRGB-to-linear, rounded), X, Y, Z with 12-bit coefficients (white point divided
// out), their f() through a 15-bit table, L = (296 fY - 1336934) >> 15, a and b likewise, all
// rounded. Back to RGB in float (OpenCV's own tables there give a level of difference now and
// then: docs/dali_differences.md).
struct LabTables {
  uint16_t gamma[256];
  uint16_t cbrt[3072];
};

// The tables, computed once on the host (in double, as OpenCV's soft-float).
inline const LabTables& lab_tables() {
  static const LabTables t = [] {
    LabTables x{};
    for (int i = 0; i < 256; ++i) {
      const double c = i / 255.0;
      const double g = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
      x.gamma[i] = uint16_t(std::lround(255.0 * 8 * g));
    }
    for (int i = 0; i < 3072; ++i) {
      const double v = i / (255.0 * 8);
      const double f = v < 0.008856 ? v * 7.787 + 16.0 / 116.0 : std::cbrt(v);
      x.cbrt[i] = uint16_t(std::lround(32768 * f));
    }
    return x;
  }();
  return t;
}

STOKER_HOST_DEVICE inline uint8_t descale_u8(int64_t v, int n) {
  const int64_t r = (v + (int64_t(1) << (n - 1))) >> n;
  return uint8_t(r < 0 ? 0 : r > 255 ? 255 : r);
}

// RGB (0..255) to 8-bit L, a, b (a and b offset by 128).
STOKER_HOST_DEVICE inline void rgb_to_lab8(const uint8_t* rgb, uint8_t lab[3], const LabTables& t) {
  const int64_t R = t.gamma[rgb[0]], G = t.gamma[rgb[1]], B = t.gamma[rgb[2]];
  auto f = [&](int64_t cr, int64_t cg, int64_t cb) {
    return int64_t(t.cbrt[(R * cr + G * cg + B * cb + 2048) >> 12]);
  };
  const int64_t fx = f(1777, 1541, 778), fy = f(871, 2929, 296), fz = f(73, 448, 3575);
  lab[0] = descale_u8(296 * fy - 1336934, 15);
  lab[1] = descale_u8(500 * (fx - fy) + (int64_t(128) << 15), 15);
  lab[2] = descale_u8(200 * (fy - fz) + (int64_t(128) << 15), 15);
}

STOKER_HOST_DEVICE inline float linear_to_srgb(float c) {
  return c <= 0.0031308f ? c * 12.92f : 1.055f * powf(c, 1.f / 2.4f) - 0.055f;
}
STOKER_HOST_DEVICE inline float lab_finv(float f) {
  return f > 0.206893f ? f * f * f : (f - 16.f / 116.f) / 7.787f;
}

// 8-bit L, a, b back to RGB.
STOKER_HOST_DEVICE inline void lab8_to_rgb(const uint8_t lab[3], uint8_t* rgb) {
  const float L = lab[0] * 100.f / 255.f, a = float(lab[1]) - 128.f, b = float(lab[2]) - 128.f;
  const float fy = (L + 16.f) / 116.f;
  const float Y = L > 8.f ? fy * fy * fy : L / 903.3f;
  const float fyy = L > 8.f ? fy : 7.787f * Y + 16.f / 116.f;
  const float X = lab_finv(fyy + a / 500.f) * 0.950456f;
  const float Z = lab_finv(fyy - b / 200.f) * 1.088754f;
  const float r = 3.240479f * X - 1.53715f * Y - 0.498535f * Z;
  const float g = -0.969256f * X + 1.875991f * Y + 0.041556f * Z;
  const float bl = 0.055648f * X - 0.204043f * Y + 1.057311f * Z;
  auto out = [](float c) {
    c = c < 0.f ? 0.f : (c > 1.f ? 1.f : c);
    return round_u8(linear_to_srgb(c) * 255.f);
  };
  rgb[0] = out(r), rgb[1] = out(g), rgb[2] = out(bl);
}

// One sample on the CPU: H x W x C (C = 1 or 3), every channel on its own or (luma) the L* of
// RGB. `luts`: tiles_y * tiles_x * 256 bytes; `plane`: H * W bytes (luma only).
inline void clahe_cpu(const uint8_t* in, uint8_t* out, int64_t H, int64_t W, int C, bool luma,
                      const ClaheGeometry& g, uint8_t* luts, uint8_t* plane) {
  const LabTables& lt = lab_tables();
  if (H == 0 || W == 0) return;
  // The tables of one plane (values at src[(y * W + x) * stride]).
  auto tables = [&](const uint8_t* src, int stride) {
    for (int ty = 0; ty < g.tiles_y; ++ty)
      for (int tx = 0; tx < g.tiles_x; ++tx) {
        uint32_t hist[256] = {};
        for (int64_t y = ty * g.tile_h; y < (ty + 1) * g.tile_h; ++y) {
          const int64_t sy = reflect101(y, H);
          for (int64_t x = tx * g.tile_w; x < (tx + 1) * g.tile_w; ++x)
            ++hist[src[(sy * W + reflect101(x, W)) * stride]];
        }
        clahe_tile_lut(hist, g, luts + (int64_t(ty) * g.tiles_x + tx) * 256);
      }
  };
  if (luma && C == 3) {
    uint8_t lab[3];
    for (int64_t k = 0; k < H * W; ++k) rgb_to_lab8(in + 3 * k, lab, lt), plane[k] = lab[0];
    tables(plane, 1);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        const int64_t k = y * W + x;
        rgb_to_lab8(in + 3 * k, lab, lt);
        lab[0] = clahe_pixel(luts, g, y, x, plane[k]);
        lab8_to_rgb(lab, out + 3 * k);
      }
    return;
  }
  for (int c = 0; c < C; ++c) {
    tables(in + c, C);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        const int64_t k = (y * W + x) * C + c;
        out[k] = clahe_pixel(luts, g, y, x, in[k]);
      }
  }
}

}  // namespace stoker::kernels
