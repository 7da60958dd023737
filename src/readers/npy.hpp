// NumPy .npy files: header parsing (format versions 1, 2 and 3) and C-order conversion of
// Fortran-ordered arrays.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/dtype.hpp"

namespace stoker::readers {

struct NpyHeader {
  DType dtype = DType::kU8;
  std::vector<int64_t> shape;
  bool fortran_order = false;
  size_t data_offset = 0;  // where the array data starts
  size_t data_bytes() const;
};

// Parses the magic, version and header dict ({'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }) of a .npy file. Throws ValueError naming `path` for bad magic,
// truncation, unsupported dtypes (big-endian, objects, structured) or a file shorter than its
// data.
NpyHeader parse_npy_header(std::span<const uint8_t> file, const std::string& path);

// Copies the array to C order (`out` has data_bytes()); a plain copy when already C-ordered.
void npy_to_c_order(const NpyHeader& h, const uint8_t* data, uint8_t* out);

}  // namespace stoker::readers
