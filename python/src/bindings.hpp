// Declarations shared by the binding files of stoker._stoker.
#pragma once

#include <nanobind/nanobind.h>

#include "stoker/core/batch.hpp"

namespace stoker::python {

namespace nb = nanobind;

void bind_batch(nb::module_& m);
void bind_pipeline(nb::module_& m);

// Copies a list of arrays (or one array whose first axis is the batch) into a contiguous Batch.
Batch batch_from_arrays(nb::handle data, const std::string& what);

}  // namespace stoker::python
