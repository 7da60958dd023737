// transpose: permutes axes (and the layout's letters); on the GPU one strided-copy launch per batch.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema transpose_schema();
}  // namespace stoker::ops
