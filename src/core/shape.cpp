#include "stoker/core/shape.hpp"

namespace stoker {

std::string TensorShape::to_string() const {
  std::string s = "(";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  if (dims_.size() == 1) s += ",";
  return s + ")";
}

}  // namespace stoker
