// Out-of-range indices of a filter's taps mapped into an extent of n elements, as DALI (and
// OpenCV) name the modes; one definition for the CPU and GPU kernels of the filter area.
//   reflect_101   dcb|abcdefghi|hgf   (mirrored without repeating the edge; OpenCV's default)
//   reflect_1001  cba|abcdefghi|ihg   (mirrored repeating the edge)
//   wrap          ghi|abcdefghi|abc
//   clamp         aaa|abcdefghi|iii
//   constant      -1: the caller pads with its fill value
// Taps further out than one extent keep reflecting or wrapping (OpenCV's borderInterpolate).
#pragma once

#include <cstdint>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

enum class Border : int32_t { kReflect101, kReflect1001, kWrap, kClamp, kConstant };

// Index i mirrored into [0, n) without repeating the edge (n >= 1).
STOKER_HOST_DEVICE inline int64_t reflect101(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// Index i in [0, n) by `mode`, or -1 where `mode` pads with a constant (n >= 1).
STOKER_HOST_DEVICE inline int64_t border_index(int64_t i, int64_t n, Border mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case Border::kReflect101:
      return reflect101(i, n);
    case Border::kReflect1001: {
      const int64_t period = 2 * n;
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - 1 - i;
    }
    case Border::kWrap:
      i %= n;
      return i < 0 ? i + n : i;
    case Border::kClamp:
      return i < 0 ? 0 : n - 1;
    default:
      return -1;
  }
}

}  // namespace stoker::kernels
