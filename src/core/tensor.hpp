// TensorView (non-owning: pointer, shape, dtype, layout, memory kind) and Tensor (a view that
// keeps its Buffer alive).
#pragma once

#include <memory>

#include "stoker/core/dtype.hpp"
#include "stoker/core/memory.hpp"
#include "stoker/core/shape.hpp"

namespace stoker {

struct TensorView {
  void* data = nullptr;
  TensorShape shape;
  DType dtype = DType::kU8;
  TensorLayout layout;
  MemoryKind memory = MemoryKind::kHost;

  int64_t num_elements() const { return shape.volume(); }
  size_t num_bytes() const { return size_t(shape.bytes(dtype_size(dtype))); }
  // Typed access; throws TypeError when T does not match dtype.
  template <typename T>
  T* as() const {
    STOKER_ENFORCE(dtype_of<std::remove_const_t<T>> == dtype, TypeError, "tensor of dtype ",
                   dtype_name(dtype), " accessed as ",
                   dtype_name(dtype_of<std::remove_const_t<T>>));
    return static_cast<T*>(data);
  }
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Buffer> owner, TensorView view)
      : owner_(std::move(owner)), view_(std::move(view)) {}
  // A new tensor from `pool`, uninitialised.
  static Tensor allocate(MemoryPool& pool, DType dtype, TensorShape shape,
                         TensorLayout layout = {});
  const TensorView& view() const { return view_; }
  const std::shared_ptr<Buffer>& owner() const { return owner_; }

 private:
  std::shared_ptr<Buffer> owner_;
  TensorView view_;
};

}  // namespace stoker
