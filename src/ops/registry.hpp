// The registry: one explicit, sorted list of every operator schema (registry.cpp). No static
// initialisers, no registration macros.
#pragma once

#include <string_view>
#include <vector>

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

const std::vector<OpSchema>& op_schemas();
// nullptr when unknown.
const OpSchema* find_op_schema(std::string_view name);
// The operator that copies a CPU value to the device (the builder inserts it where a gpu
// operator reads CPU data; Python's `.gpu()`).
const OpSchema& device_copy_schema();

}  // namespace stoker::ops
