// Look-up tables over integer data (DALI's fn.lookup_table): out[k] = table[in[k]] where in[k]
// is a key of the table, else the default value. The table is built on the host as DALI builds
// it (every value converted from float with DALI's ConvertSat: rounded half away from zero and
// saturated for integers), so both backends only gather and the output type matters only by its
// size: the kernels copy 1-, 2-, 4- or 8-byte entries.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/core/error.hpp"

namespace stoker::kernels {

// A table of `size` entries of `entry_bytes` bytes each, and one more: the default value, read
// for every key outside [0, size).
struct LutTable {
  std::vector<uint8_t> bytes;
  int64_t size = 0;
  int entry_bytes = 4;
};

// DALI's table: every entry the default, then keys[k] -> values[k] in order (a repeated key
// keeps its last value). Keys must lie in [0, 65535] (checked by the operator); the table is
// only as long as the largest key needs. `out`: any numeric dtype but bfloat16.
inline LutTable make_lut(const std::vector<int64_t>& keys, const std::vector<float>& values,
                         float default_value, DType out) {
  LutTable t;
  for (int64_t k : keys) t.size = std::max(t.size, k + 1);
  visit_numeric(out, "lookup_table output", [&](auto tag) {
    using T = typename decltype(tag)::type;
    t.entry_bytes = int(sizeof(T));
    t.bytes.resize(size_t(t.size + 1) * sizeof(T));
    auto put = [&](int64_t at, float v) {
      const T x = convert_sat<T>(v);
      std::memcpy(t.bytes.data() + size_t(at) * sizeof(T), &x, sizeof(T));
    };
    for (int64_t k = 0; k <= t.size; ++k) put(k, default_value);
    for (size_t k = 0; k < keys.size(); ++k) put(keys[k], values[k]);
  });
  return t;
}

// One sample on the CPU: `In` an integer type, `E` an unsigned type of the entries' size.
template <typename In, typename E>
void lookup_table_cpu(const In* in, E* out, int64_t n, const E* table, int64_t size) {
  for (int64_t k = 0; k < n; ++k) {
    const In key = in[k];
    // Negative keys and keys past the table read the default (entry `size`).
    const bool inside = (std::is_unsigned_v<In> || key >= 0) && uint64_t(key) < uint64_t(size);
    out[k] = table[inside ? int64_t(key) : size];
  }
}

}  // namespace stoker::kernels
