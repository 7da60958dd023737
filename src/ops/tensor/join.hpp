// cat and stack: one operator class (join along an existing axis, or a new one); on the GPU one strided-copy launch per batch.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema cat_schema();
OpSchema stack_schema();
}  // namespace stoker::ops
