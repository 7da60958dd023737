// transforms.*: affine matrices (translation, scale, rotation, shear, crop, combine) for
// warp_affine and coord_transform, one family computing DALI's transforms.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema translation_transform_schema();
OpSchema scale_transform_schema();
OpSchema rotation_transform_schema();
OpSchema shear_transform_schema();
OpSchema crop_transform_schema();
OpSchema combine_transform_schema();
}  // namespace stoker::ops
