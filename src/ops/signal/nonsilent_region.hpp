// nonsilent_region: DALI's fn.nonsilent_region (the non-silent part of an audio signal).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema nonsilent_region_schema();
}  // namespace stoker::ops
