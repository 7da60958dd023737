// One pixel of fill_value bytes (erase, jitter, paste): one value for every channel or one per
// channel, converted to the image's dtype (rounded half away from zero, saturated).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/dtype.hpp"

namespace stoker::ops {

// Throws ValueError naming `op` when `fill` has neither 1 nor `channels` values.
std::vector<uint8_t> fill_pixel(DType dtype, int64_t channels, const std::vector<double>& fill,
                                const std::string& op);

}  // namespace stoker::ops
