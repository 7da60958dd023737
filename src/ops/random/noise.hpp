// noise.gaussian, noise.salt_and_pepper, noise.shot: DALI's noise operators, on the CPU and the
// GPU. Each sample's draws depend only on the pipeline seed, the operator and the sample's index
// (its key comes from the sample's random stream), and both backends give the same values.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema gaussian_noise_schema();
OpSchema salt_and_pepper_noise_schema();
OpSchema shot_noise_schema();
}  // namespace stoker::ops
