// cast, cast_like and copy: one converting copy. cast converts to `dtype`, cast_like to the
// dtype of its second input, copy to the input's own (a plain copy); any numeric dtype to any
// other, with the CPU's rounding and saturation on both backends.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema cast_schema();
OpSchema cast_like_schema();
OpSchema copy_schema();
}  // namespace stoker::ops
