// decoders.inflate: LZ4 blocks -> tensors of a given shape and dtype, a sample whole or as a
// sequence of chunks (as DALI's, whose only backend is nvCOMP on the GPU; here also the CPU,
// with liblz4). Also under DALI's deprecated name experimental.inflate.
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {

OpSchema inflate_schema();

}  // namespace stoker::ops
