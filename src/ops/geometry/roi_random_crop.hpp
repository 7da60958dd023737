// roi_random_crop: a fixed-size window placed at random to hold a region of interest (or to lie
// inside it when it is the larger).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema roi_random_crop_schema();
}  // namespace stoker::ops
