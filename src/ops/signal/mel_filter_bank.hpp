// mel_filter_bank: DALI's fn.mel_filter_bank (a spectrogram onto triangular mel-scale filters).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema mel_filter_bank_schema();
}  // namespace stoker::ops
