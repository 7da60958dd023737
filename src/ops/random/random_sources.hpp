// Schemas of the random source operators (random.coin_flip, random.uniform).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema coin_flip_schema();
OpSchema uniform_schema();
OpSchema normal_schema();
OpSchema choice_schema();
}  // namespace stoker::ops
