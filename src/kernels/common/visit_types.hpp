// Kernel launchers' dtype dispatch: f(T{}) for the C++ type of `d` when it is one of `Ds`
// (core/dtype.hpp's type_of); false, calling nothing, otherwise. For types a kernel reads and
// writes as they are (not float16/bfloat16, which device code stores as bits: cast_gpu.cu).
#pragma once

#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

template <DType... Ds, typename F>
bool visit_types(DType d, F&& f) {
  return ((d == Ds ? (f(type_of<Ds>{}), true) : false) || ...);
}

}  // namespace stoker::kernels
