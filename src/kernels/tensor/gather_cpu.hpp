// The CPU twin of gather_elements_gpu (copy_gpu.hpp): component k = (y * w + x) * c + ch of an
// h x w x c image takes the input's component (y + dy, x + dx, ch), (dy, dx) = offsets[2k],
// offsets[2k + 1] (inside the image: the caller clamps them). Components of `element_size`
// bytes.
#pragma once

#include <cstdint>
#include <cstring>

namespace stoker::kernels {

inline void gather_elements_cpu(const void* in, void* out, int64_t h, int64_t w, int64_t c,
                                const int8_t* offsets, size_t element_size) {
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  const int64_t count = h * w * c;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t p = k / c, ch = k - p * c;
    const int64_t y = p / w + offsets[2 * k], x = p % w + offsets[2 * k + 1];
    std::memcpy(dst + size_t(k) * element_size, src + size_t((y * w + x) * c + ch) * element_size,
                element_size);
  }
}

}  // namespace stoker::kernels
