// Arithmetic expressions on the CPU, the twin of arithmetic_gpu: the same postfix program
// (ArithInstr, arithmetic_functions.hpp), evaluated in double a block of elements at a time, each
// node's values converted to its type as cast_value converts (floats to the nearest value, to
// integers rounded half away from zero and saturated, NaN to 0). An integer division or modulo by
// zero stops it with a status (the operator raises; the GPU gives 0 there). Operands of the
// output's elements or of one element are read as they are (the fast path); broadcast ones
// through their strides (ArithBroadcast).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/math/arithmetic_functions.hpp"

namespace stoker::kernels {

// One operand of a sample: `count` elements of `type`, or one that every element sees, or,
// with `broadcast`, elements read through its strides (arith_plan_broadcast).
struct ArithOperand {
  const void* data = nullptr;
  int64_t count = 0;
  DType type = DType::kF32;
  const ArithBroadcast* broadcast = nullptr;
};

enum class ArithStatus { kOk, kIntegerDivisionByZero, kIntegerModuloByZero };

constexpr int64_t kArithBlock = 256;  // elements evaluated together, node by node

// The most values the program's stack holds at once.
inline int arith_stack_depth(std::span<const ArithInstr> program) {
  int depth = 0, most = 0;
  for (const ArithInstr& ins : program) {
    depth += ins.op < 0 ? 1 : 1 - ins.arity;
    most = std::max(most, depth);
  }
  return most;
}

namespace arith_detail {

// v[0..m) = the elements of a broadcast operand for output elements [first, first + m): the
// coordinates of `first` are found once, then the block is walked a run of the innermost axis
// at a time (a run of a broadcast innermost axis is one value repeated).
template <typename T>
void load_strided(const T* p, const ArithBroadcast& b, int64_t first, int64_t m, double* v) {
  int64_t idx[kArithMaxDims] = {};
  int64_t offset = 0;
  for (int d = b.ndim - 1; d >= 0; --d) {
    idx[d] = first % b.extent[d];
    first /= b.extent[d];
    offset += idx[d] * b.stride[d];
  }
  const int last = b.ndim - 1;
  const int64_t inner = b.stride[last], extent = b.extent[last];
  int64_t i = idx[last];
  for (int64_t k = 0; k < m; ++k) {
    v[k] = cast_value<double>(p[offset]);
    offset += inner;
    if (++i == extent) {  // carry into the outer axes
      offset -= i * inner;
      i = 0;
      for (int d = last - 1; d >= 0; --d) {
        offset += b.stride[d];
        if (++idx[d] < b.extent[d]) break;
        offset -= idx[d] * b.stride[d];
        idx[d] = 0;
      }
    }
  }
}

// v[0..m) = operand elements [first, first + m) (a one-element operand repeated).
inline void load(const ArithOperand& a, int64_t first, int64_t m, double* v) {
  visit_numeric(a.type, "arithmetic input", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(a.data);
    if (a.broadcast) {
      load_strided(p, *a.broadcast, first, m, v);
    } else if (a.count == 1) {
      std::fill(v, v + m, cast_value<double>(p[0]));
    } else {
      for (int64_t k = 0; k < m; ++k) v[k] = cast_value<double>(p[first + k]);
    }
  });
}

// The values as type t would hold them.
inline void to_type(double* v, int64_t m, DType t) {
  if (t == DType::kF64) return;
  if (t == DType::kF32) {  // the common case, in a loop the compiler vectorises
    for (int64_t k = 0; k < m; ++k) v[k] = double(float(v[k]));
    return;
  }
  visit_numeric(t, "arithmetic", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < m; ++k) v[k] = cast_value<double>(cast_value<T>(v[k]));
  });
}

inline void store(const double* v, int64_t m, void* out, DType t, int64_t first) {
  visit_numeric(t, "arithmetic", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out) + first;
    for (int64_t k = 0; k < m; ++k) o[k] = cast_value<T>(v[k]);
  });
}

}  // namespace arith_detail

// Evaluates `program` for `count` elements of `out` (of `out_type`) from operands `in` (each
// with `count` elements, or one, or broadcast through strides). `scratch`: arith_stack_depth(program) * kArithBlock doubles.
inline ArithStatus arithmetic_cpu(std::span<const ArithInstr> program, const ArithOperand* in,
                                  void* out, DType out_type, int64_t count, double* scratch) {
  for (int64_t first = 0; first < count; first += kArithBlock) {
    const int64_t m = std::min(kArithBlock, count - first);
    double* top = scratch;  // the next free slot of the stack
    for (const ArithInstr& ins : program) {
      if (ins.op == -1) {
        arith_detail::load(in[ins.arg], first, m, top);
        top += kArithBlock;
        continue;
      }
      if (ins.op == -2) {
        std::fill(top, top + m, ins.value);
        top += kArithBlock;
        continue;
      }
      top -= ins.arity * kArithBlock;
      double* x = top;
      const double* y = ins.arity > 1 ? x + kArithBlock : nullptr;
      const double* z = ins.arity > 2 ? x + 2 * kArithBlock : nullptr;
      const bool integer = !is_float(ins.type);
      if (integer && (ins.op == kArFdiv || ins.op == kArMod) && std::find(y, y + m, 0.0) != y + m)
        return ins.op == kArFdiv ? ArithStatus::kIntegerDivisionByZero
                                 : ArithStatus::kIntegerModuloByZero;
      // The four operations in loops of their own (vectorised; the same values as
      // arith_apply's), every other function through arith_apply.
      switch (ins.arity == 2 ? ins.op : -1) {
        case kArAdd:
          for (int64_t k = 0; k < m; ++k) x[k] = x[k] + y[k];
          break;
        case kArSub:
          for (int64_t k = 0; k < m; ++k) x[k] = x[k] - y[k];
          break;
        case kArMul:
          for (int64_t k = 0; k < m; ++k) x[k] = x[k] * y[k];
          break;
        case kArDiv:
          for (int64_t k = 0; k < m; ++k) x[k] = x[k] / y[k];
          break;
        default:
          for (int64_t k = 0; k < m; ++k)
            x[k] = arith_apply(ins.op, x[k], y ? y[k] : 0.0, z ? z[k] : 0.0, integer);
      }
      arith_detail::to_type(x, m, ins.type);
      top += kArithBlock;
    }
    arith_detail::store(scratch, m, out, out_type, first);
  }
  return ArithStatus::kOk;
}

}  // namespace stoker::kernels
