// crop's and slice's `dtype` (DALI's slice family): the output's type, float32, float16, uint8
// or the input's (the default). The elements are converted as DALI's slice kernels convert them
// (slice_cast: toward zero into uint8, float16 saturated), before the cut: a conversion element
// by element commutes with a cut, and the cut's fill values are then written in the output's
// type directly.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// The `dtype` argument of `spec` (nullopt: the input's); the type is checked against the input
// at run time.
std::optional<DType> slice_dtype_arg(const OpSpec& spec);

// Runs `body` with ws.inputs[0] replaced by its conversion to `dtype` (on the input's memory,
// with its source_info) when that differs from the input's type; errors name `op`.
void run_converted(const Operator& op, Workspace& ws, std::optional<DType> dtype,
                   const std::function<void()>& body);

}  // namespace stoker::ops
