// mfcc: DALI's fn.mfcc (mel-frequency cepstral coefficients: a DCT of a mel spectrogram).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema mfcc_schema();
}  // namespace stoker::ops
