// Test support for the filter kernels' tests: the border modes written out as loops over
// reflections, independent of border.hpp, which the kernels under test use.
#pragma once

#include <cstdint>

#include "stoker/kernels/filter/border.hpp"

namespace stoker::kernels::reference {

// Where index i of an axis of n elements reads from under border b (-1: the fill value).
inline int64_t ref_index(int64_t i, int64_t n, Border b) {
  switch (b) {
    case Border::kReflect101:
      if (n == 1) return 0;
      while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
      return i;
    case Border::kReflect1001:
      while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - 1 - i;
      return i;
    case Border::kWrap:
      while (i < 0) i += n;
      return i % n;
    case Border::kClamp:
      return i < 0 ? 0 : i >= n ? n - 1 : i;
    default:
      return i >= 0 && i < n ? i : -1;
  }
}

}  // namespace stoker::kernels::reference
