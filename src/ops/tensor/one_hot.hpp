// one_hot: labels become one-hot vectors along a new axis of num_classes values.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema one_hot_schema();
}  // namespace stoker::ops
