// spectrogram: DALI's fn.spectrogram (the short-time Fourier transform of a 1-D signal).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema spectrogram_schema();
}  // namespace stoker::ops
