#include "stoker/ops/geometry/fill_value.hpp"

#include <cstring>

#include "stoker/core/dtype.hpp"
#include "stoker/core/error.hpp"

namespace stoker::ops {

std::vector<uint8_t> fill_pixel(DType d, int64_t channels, const std::vector<double>& fill,
                                const std::string& op) {
  STOKER_ENFORCE(fill.size() == 1 || int64_t(fill.size()) == channels, ValueError, op,
                 ": fill_value needs 1 or ", channels, " values, got ", fill.size());
  const size_t es = dtype_size(d);
  std::vector<uint8_t> px(size_t(channels) * es);
  visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kI32, DType::kF16,
              DType::kF32>(d, op + " input", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t c = 0; c < channels; ++c) {
      T v = fill_cast<T>(fill[fill.size() == 1 ? 0 : size_t(c)]);
      std::memcpy(px.data() + size_t(c) * es, &v, es);
    }
  });
  return px;
}

uint64_t fill_channel_bits(const std::vector<uint8_t>& pixel, int64_t c, size_t element_size) {
  uint64_t bits = 0;
  std::memcpy(&bits, pixel.data() + size_t(c) * element_size, element_size);
  return bits;
}

}  // namespace stoker::ops
