// Declarations shared by the binding files of stoker._stoker.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
// Every caster any binding file uses, here once: a cast instantiated in a file that lacks its
// caster's header is silently a different function (one definition rule), and the linker may
// pick that one for every file.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>

#include "stoker/core/batch.hpp"

namespace stoker::python {

namespace nb = nanobind;

void bind_batch(nb::module_& m);
void bind_pipeline(nb::module_& m);
void bind_python_function(nb::module_& m);

DType from_dlpack(nb::dlpack::dtype t);

// A Batch over Python arrays without copying (external sources). `data` is a list of samples or
// one array whose first axis is the batch; a sample is anything nanobind imports as a
// C-contiguous array (numpy, DLPack producers or capsules, host or CUDA memory) or a tuple
// (address, shape, dtype name, owner) for CUDA memory described by the CUDA array interface.
// Each buffer keeps its Python object until stoker is done with the memory; the object is then
// parked and released by release_borrowed(), never on stoker's threads (they must not take
// the GIL: the Python thread may hold it while it waits for them). `device_id`: the pipeline's
// GPU (device samples elsewhere are refused), or nullopt.
Batch borrow_arrays(nb::handle data, const std::string& what, std::optional<int> device_id);
// Drops the parked Python objects whose memory no GPU work still reads (all of them, after
// waiting for that work, with `wait`). The GIL must be held.
void release_borrowed(bool wait);

}  // namespace stoker::python
