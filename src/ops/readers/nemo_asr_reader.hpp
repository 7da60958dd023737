// readers.nemo_asr: utterances listed in NeMo ASR manifests, decoded as decoders.audio decodes
// (readers/nemo_manifest.hpp parses the manifests).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema nemo_asr_reader_schema();
}  // namespace stoker::ops
