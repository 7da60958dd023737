// The random sources' `shape` argument: the extents of each sample's tensor ([] for a scalar).
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/core/shape.hpp"
#include "stoker/ops/op_spec.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

inline TensorShape shape_arg(const OpSpec& spec) {
  auto dims = spec.arg<std::vector<int64_t>>("shape");
  for (auto d : dims)
    STOKER_ENFORCE(d >= 0, ValueError, spec.schema->name, ": shape extents must be >= 0, got ",
                   format_arg_value(dims));
  return TensorShape(dims);
}

}  // namespace stoker::ops
