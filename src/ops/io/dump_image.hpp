// dump_image: writes each image of the batch to a Netpbm file in the working folder and passes
// the batch on unchanged (a debugging aid, as DALI's).
#pragma once

#include <cstdint>
#include <string>

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema dump_image_schema();

// The text DALI writes for an h x w x c (c = 1 or 3) uint8 image: "P2" (grey) or "P3" (colour)
// ASCII Netpbm, "w h", 255, then one line per row of values each followed by a space.
std::string netpbm_ascii(const uint8_t* hwc, int64_t h, int64_t w, int64_t c);

}  // namespace stoker::ops
