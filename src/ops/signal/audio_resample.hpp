// audio_resample: DALI's windowed-sinc resampling of audio signals (kernels/signal/resample.hpp),
// with its ways of giving the ratio (in_rate/out_rate, scale, out_length) and its conversions
// between sample types.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema audio_resample_schema();

}  // namespace stoker::ops
