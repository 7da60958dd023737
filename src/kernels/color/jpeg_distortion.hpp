// JPEG compression artefacts computed directly, without an entropy coder: DALI 2.4's GPU
// jpeg_compression_distortion. Each 16x16 block of an RGB image (4:2:0: four 8x8 luma blocks,
// one Cb and one Cr block made from the 2x2 pixel averages) goes through the forward DCT, is
// quantised with the JPEG tables scaled to `quality` and dequantised at once, and comes back
// through the inverse DCT; chroma is upsampled by repetition. Reads past the image's edge take
// the nearest edge pixel; only pixels inside it are written.
//
// The value arithmetic is shared by the GPU kernel (jpeg_distortion_gpu.cu) and the CPU
// reference below, and is written out operation by operation, multiply-adds fused exactly where
// nvcc fuses them in DALI's kernel (its default -fmad=true; the PTX of DALI's expressions), so
// that both compute the same floats as DALI's GPU backend: the .cu file is built with
// -fmad=false and the host side without contraction, so no other operation is fused.
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/kernels/common/host_device.hpp"

namespace stoker::kernels {

// The scaled quantisation tables of one quality (row-major, row = vertical frequency).
struct JpegDistortionTables {
  uint8_t luma[64];
  uint8_t chroma[64];
};

// DALI's tables for `quality` (clamped to 1..100): the JPEG standard's (Annex K) scaled by
// 50 / q below 50, else by 2 - 2q / 100, in float, rounded half away from zero, kept in 1..255.
// (Not libjpeg's integer scaling, which differs for some entries.)
JpegDistortionTables jpeg_distortion_tables(int quality);

// The CPU reference: an h x w RGB image (HWC, uint8, dense) into `out` (same shape).
void jpeg_distortion_reference(const uint8_t* in, uint8_t* out, int64_t h, int64_t w,
                               const JpegDistortionTables& tables);

namespace jpeg_distortion {

// float -> uint8: to nearest, ties to even, saturated (DALI's ConvertSat on the device).
STOKER_HD inline uint8_t to_u8(float v) {
#if defined(__CUDA_ARCH__)
  const int r = __float2int_rn(v);
#else
  const float n = std::nearbyint(v);  // the default rounding mode: to nearest, ties to even
  const int r = n < -1e9f ? -1000000000 : n > 1e9f ? 1000000000 : int(n);
#endif
  return uint8_t(r < 0 ? 0 : r > 255 ? 255 : r);
}

STOKER_HD inline float fma_(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

STOKER_HD inline float round_away(float v) {
#if defined(__CUDA_ARCH__)
  return roundf(v);
#else
  return std::round(v);
#endif
}

STOKER_HD inline float reciprocal(float q) {
#if defined(__CUDA_ARCH__)
  return __frcp_rn(q);
#else
  return 1.0f / q;
#endif
}

STOKER_HD inline uint8_t luma(float r, float g, float b) {
  return to_u8(fma_(b, 0.114f, fma_(r, 0.299f, g * 0.587f)));
}
STOKER_HD inline uint8_t cb(float r, float g, float b) {
  return to_u8(fma_(b, 0.5f, fma_(g, -0.33126411f, r * -0.16873589f)) + 128.0f);
}
STOKER_HD inline uint8_t cr(float r, float g, float b) {
  return to_u8(fma_(b, -0.08131241f, fma_(r, 0.5f, g * -0.41868759f)) + 128.0f);
}

// The mean of four values, rounded as DALI's (the sum times 0.25, ties to even).
STOKER_HD inline float average4(int a, int b, int c, int d) {
  return float(to_u8(float(a + b + c + d) * 0.25f));
}

// DALI's 8-point DCT (the CUDA samples' factorisation, orthonormal) on x[0], x[stride], ...
constexpr float kA = 1.387039845322148f, kB = 1.306562964876377f, kC = 1.175875602419359f,
                kD = 0.785694958387102f, kE = 0.541196100146197f, kF = 0.275899379282943f,
                kNorm = 0.3535533905932737f;

STOKER_HD inline void dct_forward(float* x, int stride) {
  const float x0 = x[0], x1 = x[stride], x2 = x[2 * stride], x3 = x[3 * stride], x4 = x[4 * stride],
              x5 = x[5 * stride], x6 = x[6 * stride], x7 = x[7 * stride];
  const float t0 = x0 + x7, t1 = x1 + x6, t2 = x2 + x5, t3 = x3 + x4;
  const float t4 = x0 - x7, t5 = x6 - x1, t6 = x2 - x5, t7 = x4 - x3;
  const float t8 = t0 + t3, t9 = t0 - t3, t10 = t1 + t2, t11 = t1 - t2;
  x[0] = kNorm * (t8 + t10);
  x[2 * stride] = kNorm * fma_(t11, kE, t9 * kB);
  x[4 * stride] = kNorm * (t8 - t10);
  x[6 * stride] = kNorm * (t9 * kE - t11 * kB);
  x[stride] = kNorm * (fma_(t6, kD, t4 * kA - t5 * kC) - t7 * kF);
  x[3 * stride] = kNorm * fma_(t7, kD, fma_(t5, kF, t4 * kC) - t6 * kA);
  x[5 * stride] = kNorm * (fma_(t6, kF, fma_(t5, kA, t4 * kD)) - t7 * kC);
  x[7 * stride] = kNorm * fma_(t7, kA, fma_(t6, kC, fma_(t5, kD, t4 * kF)));
}

STOKER_HD inline void dct_inverse(float* x, int stride) {
  const float x0 = x[0], x1 = x[stride], x2 = x[2 * stride], x3 = x[3 * stride], x4 = x[4 * stride],
              x5 = x[5 * stride], x6 = x[6 * stride], x7 = x[7 * stride];
  const float t0 = x0 + x4, t1 = fma_(x2, kB, x6 * kE);
  const float t2 = t0 + t1, t3 = t0 - t1;
  const float t4 = fma_(x5, kD, fma_(x3, kC, fma_(x1, kA, x7 * kF)));
  const float t5 = fma_(x3, kD, x7 * kA - x1 * kF) - x5 * kC;
  const float t6 = x0 - x4, t7 = x2 * kE - x6 * kB;
  const float t8 = t6 + t7, t9 = t6 - t7;
  const float t10 = ((x1 * kC - x7 * kD) - x3 * kF) - x5 * kA;
  const float t11 = fma_(x5, kF, fma_(x1, kD, x7 * kC) - x3 * kA);
  x[0] = kNorm * (t2 + t4);
  x[7 * stride] = kNorm * (t2 - t4);
  x[4 * stride] = kNorm * (t3 + t5);
  x[3 * stride] = kNorm * (t3 - t5);
  x[stride] = kNorm * (t8 + t10);
  x[5 * stride] = kNorm * (t9 - t11);
  x[2 * stride] = kNorm * (t9 + t11);
  x[6 * stride] = kNorm * (t8 - t10);
}

// A coefficient quantised and dequantised at once.
STOKER_HD inline float quantize(float v, float q) { return q * round_away(v * reciprocal(q)); }

// One pixel back to RGB from its 8-bit Y, Cb, Cr.
STOKER_HD inline void to_rgb(uint8_t y8, uint8_t cb8, uint8_t cr8, uint8_t* rgb) {
  const float y = float(y8), b = float(cb8) - 128.0f, r = float(cr8) - 128.0f;
  rgb[0] = to_u8(fma_(r, 1.402f, y));
  rgb[1] = to_u8(fma_(r, -0.714136285f, fma_(b, -0.344136285f, y)));
  rgb[2] = to_u8(fma_(b, 1.772f, y));
}

// One 16x16 block's six 8x8 blocks (0-3: luma, left to right then down; 4: Cb; 5: Cr), each
// row padded to 9 floats as in the kernel's shared memory.
using Mcu = float[6][8][9];

// The 2x2 pixel group (gx, gy) of the block at (x0, y0): its four luma values and its chroma
// into `m`, level-shifted.
STOKER_HD inline void load_group(const uint8_t* in, int64_t h, int64_t w, int64_t x0, int64_t y0,
                                 int gx, int gy, Mcu& m) {
  int px[4][3];
  for (int k = 0; k < 4; ++k) {
    int64_t x = x0 + 2 * gx + (k & 1), y = y0 + 2 * gy + (k >> 1);
    x = x < w ? x : w - 1;
    y = y < h ? y : h - 1;
    const uint8_t* p = in + (y * w + x) * 3;
    px[k][0] = p[0], px[k][1] = p[1], px[k][2] = p[2];
  }
  const int blk = (gy / 4) * 2 + gx / 4, ly = (2 * gy) % 8, lx = (2 * gx) % 8;
  for (int k = 0; k < 4; ++k)
    m[blk][ly + (k >> 1)][lx + (k & 1)] =
        float(luma(float(px[k][0]), float(px[k][1]), float(px[k][2]))) - 128.0f;
  const float r = average4(px[0][0], px[1][0], px[2][0], px[3][0]),
              g = average4(px[0][1], px[1][1], px[2][1], px[3][1]),
              b = average4(px[0][2], px[1][2], px[2][2], px[3][2]);
  m[4][gy][gx] = float(cb(r, g, b)) - 128.0f;
  m[5][gy][gx] = float(cr(r, g, b)) - 128.0f;
}

// The group's pixels that lie inside the image, back to RGB, from the processed blocks.
STOKER_HD inline void store_group(const Mcu& m, int64_t h, int64_t w, int64_t x0, int64_t y0,
                                  int gx, int gy, uint8_t* out) {
  const uint8_t cb8 = to_u8(m[4][gy][gx] + 128.0f), cr8 = to_u8(m[5][gy][gx] + 128.0f);
  const int blk = (gy / 4) * 2 + gx / 4, ly = (2 * gy) % 8, lx = (2 * gx) % 8;
  for (int k = 0; k < 4; ++k) {
    const int64_t x = x0 + 2 * gx + (k & 1), y = y0 + 2 * gy + (k >> 1);
    if (x >= w || y >= h) continue;
    to_rgb(to_u8(m[blk][ly + (k >> 1)][lx + (k & 1)] + 128.0f), cb8, cr8, out + (y * w + x) * 3);
  }
}

}  // namespace jpeg_distortion
}  // namespace stoker::kernels
