#include "stoker/core/shape.hpp"

#include <algorithm>

#include "stoker/core/error.hpp"

namespace stoker {

int64_t TensorShape::overflowed_volume() const {
  if (std::find(dims_.begin(), dims_.end(), int64_t(0)) != dims_.end()) return 0;
  throw ValueError(detail::concat("a sample of shape ", to_string(),
                                  " would have more elements than 2^63 - 1"));
}

int64_t TensorShape::bytes(size_t element_size) const {
  int64_t n = 0;
  if (__builtin_mul_overflow(volume(), int64_t(element_size), &n))
    throw ValueError(detail::concat("a sample of shape ", to_string(), " of ", element_size,
                                    "-byte elements would have more bytes than 2^63 - 1"));
  return n;
}

std::string TensorShape::to_string() const {
  std::string s = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) s += ",";
  return s + ")";
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) st[k - 1] = st[k] * dims[k];
  return st;
}

}  // namespace stoker
