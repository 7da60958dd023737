// fn.experimental.median_blur, dilate and erode: rank filters over a rectangular window of an
// image's planes, as DALI 2.4 computes them through CV-CUDA (MedianBlur, Morphology):
//   median  the middle value (index n / 2 in ascending order) of the kh x kw window centred on
//           the pixel, borders replicated (aaa|abcd|ddd), per channel;
//   dilate  the largest value of the window placed with its anchor (ay, ax) over the pixel;
//   erode   the smallest; borders by `border` (border.hpp). CV-CUDA starts dilate's maximum at
//           numeric_limits<T>::min() and erode's minimum at max(), and a constant border reads
//           the same value: for float that is the smallest positive normal, 1.18e-38, not the
//           lowest value, so a float dilate never gives less than 1.18e-38 (a window of negative
//           values gives 1.18e-38) and a float erode never more than FLT_MAX (+inf gives FLT_MAX).
// `iterations` repeats the operation on its own output. Values are compared as keys that order
// like the values (floats: -0 before +0, so that CPU and GPU pick the same of two zeros).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/filter/border.hpp"

namespace stoker::kernels {

enum class RankOp : int32_t { kMedian, kDilate, kErode };

// One sample: planes of height x width pixels of `channels` interleaved channels.
struct RankShape {
  int64_t planes = 1, height = 1, width = 1, channels = 1;
  int32_t kh = 3, kw = 3;  // window
  int32_t ay = 1, ax = 1;  // the window's element over the output pixel
  Border border = Border::kClamp;
};

// An unsigned key ordered as the values: u8 and u16 as they are, floats by their bits (negative
// ones flipped), so that selection and comparisons need no float compare.
template <typename T>
STOKER_HOST_DEVICE inline uint32_t rank_key(T v) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
  } else {
    return uint32_t(v);
  }
}
template <typename T>
STOKER_HOST_DEVICE inline T rank_value(uint32_t k) {
  if constexpr (std::is_same_v<T, float>) {
    const uint32_t b = (k & 0x80000000u) ? k & 0x7fffffffu : ~k;
    float v;
    memcpy(&v, &b, 4);
    return v;
  } else {
    return T(k);
  }
}

// The value a constant border reads for `op`, and where dilate and erode start (see above).
template <typename T>
inline T rank_border_fill(RankOp op) {
  return op == RankOp::kDilate ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

// One pass of `op` over one sample (all planes); `keys`: scratch for the median.
template <typename T>
void rank_filter_pass(const T* in, T* out, const RankShape& s, RankOp op,
                      std::vector<uint32_t>& keys) {
  const int64_t C = s.channels, row = s.width * C, plane = s.height * row;
  const uint32_t fill = rank_key(rank_border_fill<T>(op));
  const int64_t n = int64_t(s.kh) * s.kw;
  keys.resize(size_t(n));
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* src = in + p * plane;
    T* dst = out + p * plane;
    for (int64_t y = 0; y < s.height; ++y)
      for (int64_t x = 0; x < s.width; ++x)
        for (int64_t c = 0; c < C; ++c) {
          uint32_t best = fill;
          int64_t m = 0;
          for (int32_t i = 0; i < s.kh; ++i) {
            const int64_t sy = border_index(y - s.ay + i, s.height, s.border);
            for (int32_t j = 0; j < s.kw; ++j) {
              const int64_t sx = border_index(x - s.ax + j, s.width, s.border);
              const uint32_t k = sy < 0 || sx < 0 ? fill : rank_key(src[sy * row + sx * C + c]);
              if (op == RankOp::kMedian)
                keys[size_t(m++)] = k;
              else if (op == RankOp::kDilate)
                best = k > best ? k : best;
              else
                best = k < best ? k : best;
            }
          }
          if (op == RankOp::kMedian) {
            std::nth_element(keys.begin(), keys.begin() + n / 2, keys.end());
            best = keys[size_t(n / 2)];
          }
          dst[y * row + x * C + c] = rank_value<T>(best);
        }
  }
}

// `iterations` passes (>= 1); `scratch` grows to one sample when there are two or more.
template <typename T>
void rank_filter_cpu(const T* in, T* out, const RankShape& s, RankOp op, int iterations,
                     std::vector<T>& tmp, std::vector<uint32_t>& keys) {
  const int64_t total = s.planes * s.height * s.width * s.channels;
  if (total == 0) return;
  if (iterations > 1) tmp.resize(size_t(total));
  // Alternate between out and tmp so that the last pass writes out.
  const T* src = in;
  for (int it = 0; it < iterations; ++it) {
    T* dst = (iterations - it) % 2 == 1 ? out : tmp.data();
    rank_filter_pass(src, dst, s, op, keys);
    src = dst;
  }
}

}  // namespace stoker::kernels
