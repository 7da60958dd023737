// reshape and reinterpret: a new shape (or layout, or element type) over the same bytes, no
// copy. squeeze and expand_dims (shape_ops.cpp) are views too and share the helpers below.
#pragma once

#include <string>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema reshape_schema();
OpSchema reinterpret_schema();

// Appends the output of a view operator: sample i of `in` seen as `shapes[i]` of `dtype`,
// sharing the input's memory (the caller checked that the bytes match), with `layout`.
Batch& add_view_output(Workspace& ws, const Batch& in, DType dtype,
                       const std::vector<TensorShape>& shapes, TensorLayout layout);

// DALI's src_dims: output axis d takes the extent of input axis src_dims[d], or 1 where it is -1.
// Errors name `op` and `sample` when an index is not an axis of `in` (or -1).
TensorShape shape_from_src_dims(const TensorShape& in, const std::vector<int64_t>& src_dims,
                                const std::string& op, int sample);

// Refuses a view whose element count changed (squeeze, expand_dims, src_dims): "op: sample i of
// shape (..) (n elements) cannot become (..) (m)".
void check_same_volume(const std::string& op, int sample, const TensorShape& in,
                       const TensorShape& out);

// Refuses a layout that does not name every axis of `shape` (an empty layout is always fine).
void check_layout_fits(const std::string& op, const TensorLayout& layout, int sample,
                       const TensorShape& shape);

}  // namespace stoker::ops
