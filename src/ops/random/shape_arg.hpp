// The random sources' `shape` argument: the extents of each sample's tensor ([] for a scalar).
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/core/shape.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/op_spec.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

inline TensorShape shape_arg(const OpSpec& spec) {
  auto dims = spec.arg<std::vector<int64_t>>("shape");
  for (auto d : dims)
    STOKER_ENFORCE(d >= 0, ValueError, spec.schema->name, ": shape extents must be >= 0, got ",
                   format_arg_value(dims));
  check_arg_elements(spec.schema->name, "shape", dims);
  return TensorShape(dims);
}

// Each sample's shape: the shape_like input's (when the operator has one), else `shape`; both
// together are refused (DALI: "shape and shape_like are mutually exclusive").
inline std::vector<TensorShape> sample_shapes(const OpSpec& spec, const Workspace& ws,
                                              const TensorShape& shape) {
  const int n = ws.num_samples();
  if (ws.inputs.empty()) return std::vector<TensorShape>(size_t(n), shape);
  STOKER_ENFORCE(!spec.given("shape"), ValueError, spec.schema->name,
                 ": give `shape` or a shape_like input, not both");
  std::vector<TensorShape> shapes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) shapes[size_t(i)] = ws.input(0).shape(i);
  return shapes;
}

}  // namespace stoker::ops
