// Helpers the tensor operators share: a shape's extents as a vector, and a visit over every
// numeric dtype.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/core/shape.hpp"

namespace stoker::ops {

inline std::vector<int64_t> dims_of(const TensorShape& s) { return {s.dims().begin(), s.dims().end()}; }

// Every numeric dtype.
template <typename F>
void visit_numeric(DType d, const std::string& what, F&& f) {
  visit_dtype<DType::kBool, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8,
              DType::kI16, DType::kI32, DType::kI64, DType::kF16, DType::kBF16, DType::kF32,
              DType::kF64>(d, what, std::forward<F>(f));
}

}  // namespace stoker::ops
