// decoders.numpy: the bytes of a .npy file per sample -> the array (as DALI's). The header is
// read by readers/npy (shared with readers.numpy); this adds DALI's rules for the operator.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "stoker/core/dtype.hpp"
#include "stoker/ops/schema.hpp"
#include "stoker/readers/npy.hpp"

namespace stoker::ops {

OpSchema numpy_decoder_schema();

// One sample's header as decoders.numpy reads it: readers::parse_npy_header plus DALI's rules
// (a non-empty input, format version 1 only). Throws ValueError naming decoders.numpy.
readers::NpyHeader parse_npy_sample(std::span<const uint8_t> bytes);

// Writes the array of `bytes` (whose header is `h`) to `out` in C order, converted to `dtype`
// (saturating, as the cast operator). `out` holds volume x dtype_size(dtype) bytes.
void decode_npy_sample(const readers::NpyHeader& h, const uint8_t* bytes, DType dtype, void* out);

}  // namespace stoker::ops
