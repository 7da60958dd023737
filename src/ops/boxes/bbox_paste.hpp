// bbox_paste: boxes following their image onto a larger canvas (paste's box companion).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema bbox_paste_schema();
}  // namespace stoker::ops
