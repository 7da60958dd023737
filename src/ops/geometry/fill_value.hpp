// One pixel of fill_value bytes (erase, jitter, paste): one value for every channel or one per
// channel, converted to the image's dtype as DALI converts fills (fill_cast: truncated toward
// zero, saturated).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/dtype.hpp"

namespace stoker::ops {

// Throws ValueError naming `op` when `fill` has neither 1 nor `channels` values.
std::vector<uint8_t> fill_pixel(DType dtype, int64_t channels, const std::vector<double>& fill,
                                const std::string& op);

// Channel c of such a pixel as the low bytes of a word (the GPU copy kernel's fill value).
uint64_t fill_channel_bits(const std::vector<uint8_t>& pixel, int64_t c, size_t element_size);

}  // namespace stoker::ops
