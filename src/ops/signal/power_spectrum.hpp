// power_spectrum: DALI's fn.power_spectrum (the FFT's power or magnitude along one axis).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema power_spectrum_schema();
}  // namespace stoker::ops
