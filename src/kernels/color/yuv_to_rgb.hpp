// Decoded video frames (8-bit Y'CbCr planes, as libavcodec and NVDEC give them) to interleaved
// RGB or YCbCr, height x width x 3. One definition for the CPU and the GPU, in integers, so the
// two backends agree bit for bit:
//  * chroma is upsampled bilinearly with the weights its siting implies: H.264/HEVC/MPEG-2's
//    default ("left": on the even luma columns, between the luma rows) or JPEG/MPEG-1's
//    ("center": between both); edges repeat. Weights are multiples of 1/16, summed exactly.
//  * the matrix is BT.601 or BT.709 (as the stream says; BT.601 when it says nothing, as FFmpeg
//    and DALI do), limited range (Y 16-235) or full range, in fixed point (2^-18 units).
//  * uint8 outputs round to nearest and saturate; float outputs keep the fraction and are not
//    clamped (0-255, or 0-1 when normalized, for colours inside the RGB cube; DALI's too). YCbCr
//    outputs are the planes' own values with chroma upsampled.
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

enum class YuvMatrix : uint8_t { kBt601, kBt709 };

struct YuvPlanes {
  const uint8_t* y = nullptr;
  const uint8_t* u = nullptr;  // Cb
  const uint8_t* v = nullptr;  // Cr
  int64_t y_pitch = 0, uv_pitch = 0;  // bytes per row
  int uv_step = 1;                    // bytes between a row's chroma samples (2: NV12)
  int shift_x = 1, shift_y = 1;       // chroma subsampling, log2 (4:2:0: 1, 1; 4:4:4: 0, 0)
  bool chroma_center = false;         // chroma sited between luma columns
  bool full_range = false;
  YuvMatrix matrix = YuvMatrix::kBt601;
  int64_t width = 0, height = 0;
};

// Coefficients of R' = Ky*(Y - y0) + Kv*Cr', G' = Ky*(Y - y0) - Gu*Cb' - Gv*Cr',
// B' = Ky*(Y - y0) + Bu*Cb', in units of 2^-14.
struct YuvCoefficients {
  int32_t ky, kv, gu, gv, bu, y0;
};

STOKER_HOST_DEVICE inline YuvCoefficients yuv_coefficients(YuvMatrix m, bool full_range) {
  // Limited range: luma scaled by 255/219, chroma by 255/224; full range: neither.
  if (m == YuvMatrix::kBt709) {
    return full_range ? YuvCoefficients{16384, 25802, 3069, 7670, 30402, 0}
                      : YuvCoefficients{19077, 29372, 3494, 8731, 34610, 16};
  }
  return full_range ? YuvCoefficients{16384, 22970, 5638, 11700, 29032, 0}
                    : YuvCoefficients{19077, 26149, 6419, 13320, 33050, 16};
}

// Along one axis: the two chroma samples luma position `i` interpolates and their weights (out
// of 4), clamped to the `size` samples. Subsampled by 2 (shift 1): samples between luma
// positions (`between`: JPEG's siting horizontally, every 4:2:0 vertically) take 3/4 of the own
// sample and 1/4 of the next one out; samples on the even positions (H.264's horizontal siting)
// are taken as they are there, and the mean of both sides at odd positions.
struct ChromaTaps {
  int64_t i0, i1;
  int32_t w0, w1;
};
STOKER_HOST_DEVICE inline ChromaTaps chroma_taps(int64_t i, int shift, bool between,
                                                 int64_t size) {
  ChromaTaps t{i, i, 4, 0};
  if (shift == 1) {
    t.i0 = i >> 1;
    if (between) {
      t.i1 = (i & 1) ? t.i0 + 1 : t.i0 - 1, t.w0 = 3, t.w1 = 1;
    } else {
      t.i1 = t.i0 + 1, t.w0 = (i & 1) ? 2 : 4, t.w1 = 4 - t.w0;
    }
  }
  t.i0 = t.i0 < 0 ? 0 : (t.i0 >= size ? size - 1 : t.i0);
  t.i1 = t.i1 < 0 ? 0 : (t.i1 >= size ? size - 1 : t.i1);
  return t;
}

// One chroma plane's value at luma (x, y), times 16 (bilinear with the siting's weights).
STOKER_HOST_DEVICE inline int32_t chroma16(const uint8_t* plane, const YuvPlanes& p, int64_t x,
                                           int64_t y) {
  const int64_t cw = (p.width + (1 << p.shift_x) - 1) >> p.shift_x;
  const int64_t ch = (p.height + (1 << p.shift_y) - 1) >> p.shift_y;
  const ChromaTaps tx = chroma_taps(x, p.shift_x, p.chroma_center, cw);
  const ChromaTaps ty = chroma_taps(y, p.shift_y, true, ch);
  const uint8_t* r0 = plane + ty.i0 * p.uv_pitch;
  const uint8_t* r1 = plane + ty.i1 * p.uv_pitch;
  const int32_t s = p.uv_step;
  return ty.w0 * (tx.w0 * r0[tx.i0 * s] + tx.w1 * r0[tx.i1 * s]) +
         ty.w1 * (tx.w0 * r1[tx.i0 * s] + tx.w1 * r1[tx.i1 * s]);
}

// Pixel (x, y) as three values in units of 2^-18 of the 0-255 scale: RGB, or (rgb = false)
// Y, Cb, Cr with chroma upsampled.
STOKER_HOST_DEVICE inline void yuv_pixel(const YuvPlanes& p, bool rgb, int64_t x, int64_t y,
                                         int32_t out[3]) {
  const int32_t luma = p.y[y * p.y_pitch + x];
  const int32_t cb16 = chroma16(p.u, p, x, y), cr16 = chroma16(p.v, p, x, y);
  if (!rgb) {
    out[0] = luma << 18, out[1] = cb16 << 14, out[2] = cr16 << 14;
    return;
  }
  const YuvCoefficients k = yuv_coefficients(p.matrix, p.full_range);
  const int32_t yy = k.ky * (luma - k.y0) * 16;  // 2^-18 units
  const int32_t cb = cb16 - 128 * 16, cr = cr16 - 128 * 16;
  out[0] = yy + k.kv * cr;
  out[1] = yy - k.gu * cb - k.gv * cr;
  out[2] = yy + k.bu * cb;
}

STOKER_HOST_DEVICE inline uint8_t yuv_to_u8(int32_t v) {
  const int32_t r = (v + (1 << 17)) >> 18;
  return uint8_t(r < 0 ? 0 : (r > 255 ? 255 : r));
}

// normalized: 0-1 instead of 0-255. Not clamped: colours outside the RGB cube keep their
// values below 0 or above 255 (as DALI's float outputs do). The scale is a power of two and the
// division by 255 correctly rounded, so both backends give the same float.
STOKER_HOST_DEVICE inline float yuv_to_float(int32_t v, bool normalized) {
  const float f = float(v) * (1.0f / 262144.0f);
  return normalized ? f / 255.f : f;
}

// The whole frame on the CPU: out is height x width x 3 of uint8_t or float. Row by row: both
// chroma planes are upsampled into a row of sums (the same weights and integer sums as
// chroma16), then each pixel is converted; equal to yuv_pixel for every pixel (tested), several
// times faster.
template <typename Out>
void yuv_to_rgb_cpu(const YuvPlanes& p, bool rgb, bool normalized, Out* out) {
  const int64_t w = p.width;
  const int64_t cw = (p.width + (1 << p.shift_x) - 1) >> p.shift_x;
  const int64_t ch = (p.height + (1 << p.shift_y) - 1) >> p.shift_y;
  std::vector<int32_t> vert(size_t(2 * cw)), up(size_t(2 * w));  // Cb then Cr
  const YuvCoefficients k = yuv_coefficients(p.matrix, p.full_range);
  auto clamp_c = [&](int64_t j) { return j < 0 ? 0 : (j >= cw ? cw - 1 : j); };
  for (int64_t y = 0; y < p.height; ++y) {
    // Vertical: the two chroma rows' weighted sum (weights out of 4).
    const ChromaTaps ty = chroma_taps(y, p.shift_y, true, ch);
    for (int c = 0; c < 2; ++c) {
      const uint8_t* plane = c == 0 ? p.u : p.v;
      const uint8_t* r0 = plane + ty.i0 * p.uv_pitch;
      const uint8_t* r1 = plane + ty.i1 * p.uv_pitch;
      int32_t* v = vert.data() + c * cw;
      for (int64_t j = 0; j < cw; ++j) v[j] = ty.w0 * r0[j * p.uv_step] + ty.w1 * r1[j * p.uv_step];
    }
    // Horizontal: each luma column's two chroma samples (weights out of 4): sums out of 16.
    for (int c = 0; c < 2; ++c) {
      const int32_t* v = vert.data() + c * cw;
      int32_t* u = up.data() + c * w;
      if (p.shift_x == 0) {
        for (int64_t x = 0; x < w; ++x) u[x] = 4 * v[x];
      } else if (p.chroma_center) {
        for (int64_t x = 0; x < w; ++x) {
          const int64_t j = x >> 1;
          u[x] = 3 * v[j] + v[clamp_c((x & 1) ? j + 1 : j - 1)];
        }
      } else {
        for (int64_t x = 0; x < w; ++x) {
          const int64_t j = x >> 1;
          u[x] = (x & 1) ? 2 * v[j] + 2 * v[clamp_c(j + 1)] : 4 * v[j];
        }
      }
    }
    const uint8_t* luma = p.y + y * p.y_pitch;
    const int32_t* cb16 = up.data();
    const int32_t* cr16 = up.data() + w;
    Out* row = out + y * w * 3;
    for (int64_t x = 0; x < w; ++x) {
      int32_t v[3];
      if (rgb) {
        const int32_t yy = k.ky * (luma[x] - k.y0) * 16;
        const int32_t cb = cb16[x] - 128 * 16, cr = cr16[x] - 128 * 16;
        v[0] = yy + k.kv * cr, v[1] = yy - k.gu * cb - k.gv * cr, v[2] = yy + k.bu * cb;
      } else {
        v[0] = int32_t(luma[x]) << 18, v[1] = cb16[x] << 14, v[2] = cr16[x] << 14;
      }
      for (int c = 0; c < 3; ++c) {
        if constexpr (sizeof(Out) == 1) {
          row[x * 3 + c] = yuv_to_u8(v[c]);
        } else {
          row[x * 3 + c] = yuv_to_float(v[c], normalized);
        }
      }
    }
  }
}

// The same on the GPU, for one frame whose planes are device memory (NVDEC's mapped NV12
// surface): out is device memory of height x width x 3 `out_type` (uint8 or float32) values.
// Returns the launch's CUDA error (0: none; cudaErrorInvalidValue for another type).
int yuv_to_rgb_gpu(const YuvPlanes& planes, bool rgb, bool normalized, DType out_type, void* out,
                   StreamHandle stream);

}  // namespace stoker::kernels
