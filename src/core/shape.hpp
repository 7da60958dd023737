// TensorShape (extents of one sample) and TensorLayout (a short string naming the axes,
// e.g. "HWC", "CHW", "FHWC"; empty when unknown).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

// The most dimensions a sample may have: numpy's limit (NPY_MAXDIMS), and what frameworks take
// through DLPack. Data declaring more is refused where it enters (readers, reshape, hand-over).
inline constexpr int kMaxNdim = 64;

class TensorShape {
 public:
  TensorShape() = default;
  TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit TensorShape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int ndim() const { return int(dims_.size()); }
  int64_t operator[](int i) const { return dims_[size_t(i)]; }
  int64_t& operator[](int i) { return dims_[size_t(i)]; }
  // Number of elements (1 for a scalar, 0 if any extent is 0). A count past int64 (extents
  // from arguments or a file's header that no memory could hold) throws ValueError naming the
  // shape, so that no size computed from it wraps around to a small, plausible one.
  int64_t volume() const {
    int64_t v = 1;
    bool over = false;
    for (auto d : dims_) over |= __builtin_mul_overflow(v, d, &v);
    return over ? overflowed_volume() : v;
  }
  // Bytes of a sample of this shape with elements of `element_size` bytes; a count past int64
  // throws ValueError as volume() does (2^62 + 1 elements of 8 bytes wrap around to 8).
  int64_t bytes(size_t element_size) const;
  const std::vector<int64_t>& dims() const { return dims_; }
  bool operator==(const TensorShape&) const = default;
  // "(375, 500, 3)"
  std::string to_string() const;

 private:
  int64_t overflowed_volume() const;  // 0 if an extent is 0, else throws
  std::vector<int64_t> dims_;
};

// Row-major element strides of a dense tensor of extents `dims` (the last axis 1).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims);

class TensorLayout {
 public:
  TensorLayout() = default;
  TensorLayout(const char* s) : s_(s) {}
  TensorLayout(std::string s) : s_(std::move(s)) {}
  TensorLayout(std::string_view s) : s_(s) {}
  const std::string& str() const { return s_; }
  bool empty() const { return s_.empty(); }
  int ndim() const { return int(s_.size()); }
  // Index of axis `c`, or -1.
  int find(char c) const {
    auto p = s_.find(c);
    return p == std::string::npos ? -1 : int(p);
  }
  bool operator==(const TensorLayout&) const = default;

 private:
  std::string s_;
};

}  // namespace stoker
