// The operators behind `if`, `and`, `or` and `not` on pipeline values
// (pipeline_def(enable_conditionals=True), python/stoker/conditionals.py): split divides a batch
// by a per-sample predicate into the samples of the `if` branch and those of the `else` branch,
// merge puts the branches' results back in the batch's order, not_ and validate_logical check
// and compute the predicates of logical expressions. Split and merge copy nothing: their
// outputs view their inputs' samples.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema split_schema();             // _conditional.split
OpSchema merge_schema();             // _conditional.merge
OpSchema not_schema();               // _conditional.not_
OpSchema validate_logical_schema();  // _conditional.validate_logical

}  // namespace stoker::ops
