// The random distributions' `dtype` argument (random.uniform, random.normal), as DALI's: draws
// are made in float32, or in double for 32- and 64-bit integers and float64 (as DALI picks its
// distribution's type), then converted to `dtype` rounding half away from zero and saturating.
// bool and float16 are refused, as DALI refuses them.
#pragma once

#include <cstdint>

#include "stoker/core/dtype.hpp"
#include "stoker/core/error.hpp"
#include "stoker/core/rng.hpp"
#include "stoker/ops/op_spec.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

inline DType random_dtype(const OpSpec& spec) {
  const DType d = dtype_from_name(spec.arg<std::string>("dtype"));
  STOKER_ENFORCE(d != DType::kBool && d != DType::kF16 && d != DType::kBF16, TypeError,
                 spec.schema->name, ": dtype ", dtype_name(d),
                 " is not supported (uint8, int8, uint16, int16, uint32, int32, uint64, int64, "
                 "float32 or float64)");
  return d;
}

// Whether draws for `d` are made in double (else float32).
inline bool draws_in_double(DType d) {
  return d == DType::kF64 || (!is_float(d) && dtype_size(d) >= 4);
}

// Uniform in [0, 1) with 53 random bits (two 32-bit draws), for the double draws.
inline double uniform53(RandomStream& rng) {
  const uint64_t hi = rng.next_u32() >> 5, lo = rng.next_u32() >> 6;  // 27 + 26 bits
  return double((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

// The schema's `dtype` argument (float32 by default, as DALI's).
inline ArgSchema random_dtype_arg() {
  return {"dtype", ArgType::kDType,
          "The output type (float32 by default; uint8..int64, float64): draws are converted to it "
          "rounding half away from zero and saturating, so integer draws of `range` [lo, hi) are "
          "the rounded continuous ones (lo and hi come half as often as the integers between).",
          std::string("float32")};
}

}  // namespace stoker::ops
