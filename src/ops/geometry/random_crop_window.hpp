// The RandomResizedCrop window (Szegedy et al.; torchvision's algorithm): up to
// `num_attempts` tries of an area fraction uniform in `area` and an aspect ratio log-uniform
// in `aspect`, sizes rounded half to even; the first window that fits is placed uniformly;
// otherwise a centred crop clamped to the aspect range. Draw order (the contract a reference
// can replay): per attempt uniform(area), uniform(log aspect); on success below(H-h+1) for y,
// then below(W-w+1) for x.
#pragma once

#include <cstdint>

#include "stoker/core/rng.hpp"

namespace stoker::ops {

struct CropWindow {
  int64_t y = 0, x = 0, height = 0, width = 0;
};

CropWindow random_resized_crop_window(int64_t H, int64_t W, double area_lo, double area_hi,
                                      double aspect_lo, double aspect_hi, int num_attempts,
                                      RandomStream& rng);

}  // namespace stoker::ops
