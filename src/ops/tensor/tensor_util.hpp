// Helpers the tensor operators share: a shape's extents as a vector (and, through dtype.hpp,
// visit_numeric, the visit over every numeric dtype).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/core/shape.hpp"

namespace stoker::ops {

inline std::vector<int64_t> dims_of(const TensorShape& s) {
  return {s.dims().begin(), s.dims().end()};
}

}  // namespace stoker::ops
