// Colour adjustments: brightness, contrast, brightness_contrast (element-wise affine maps) and
// hsv, hue, saturation, color_twist (3x3 maps of RGB pixels), per-sample arguments; and
// color_space_conversion.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema brightness_schema();
OpSchema contrast_schema();
OpSchema brightness_contrast_schema();
OpSchema hsv_schema();
OpSchema hue_schema();
OpSchema saturation_schema();
OpSchema color_twist_schema();
OpSchema color_space_conversion_schema();
}  // namespace stoker::ops
