// decoders.audio (and DALI's older name audio_decoder): encoded audio bytes -> the waveform and
// its sampling rate, as DALI's; libsndfile decodes (codecs/audio), optionally downmixed and
// resampled with audio_resample's kernel.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema audio_decoder_schema();

}  // namespace stoker::ops
