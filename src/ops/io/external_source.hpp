// external_source: batches fed from outside the pipeline (a Python callable or iterable, or
// C++ code through Pipeline::feed_input).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema external_source_schema();
}  // namespace stoker::ops
