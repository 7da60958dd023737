// arithmetic's functions and programs, defined once for the CPU kernel (arithmetic_cpu.hpp)
// and the GPU kernel (arithmetic_gpu.cu): their names and arities as the expression text
// spells them, their codes, and what each computes in double. min/max/clamp keep
// std::min/std::max's order (a NaN first operand is the result of min(NaN, y); min(x, NaN) is
// x). Also how an operand is broadcast to the output's shape (ArithBroadcast), planned on the
// host, read by both kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/core/shape.hpp"

#define STOKER_ARITH_FN STOKER_HOST_DEVICE inline

namespace stoker::kernels {

enum ArithCode : int32_t {
  kArAdd, kArSub, kArMul, kArDiv, kArFdiv, kArMod, kArPow, kArMin, kArMax, kArEq, kArNe,
  kArLt, kArLe, kArGt, kArGe, kArAnd, kArOr, kArXor, kArNeg, kArAbs, kArSqrt, kArRsqrt,
  kArExp, kArLog, kArLog2, kArLog10, kArSin, kArCos, kArTan, kArFloor, kArCeil, kArClamp,
  kArAtan2, kArAsin, kArAcos, kArAtan, kArSinh, kArCosh, kArTanh, kArAsinh, kArAcosh, kArAtanh,
  kArCbrt, kArFabs, kArFpow, kArCount
};

struct ArithFunction {
  const char* name;
  int arity;
};

// Indexed by ArithCode.
inline constexpr ArithFunction kArithFunctions[kArCount] = {
    {"add", 2},  {"sub", 2},   {"mul", 2},   {"div", 2},   {"fdiv", 2},  {"mod", 2},
    {"pow", 2},  {"min", 2},   {"max", 2},   {"eq", 2},    {"ne", 2},    {"lt", 2},
    {"le", 2},   {"gt", 2},    {"ge", 2},    {"and", 2},   {"or", 2},    {"xor", 2},
    {"neg", 1},  {"abs", 1},   {"sqrt", 1},  {"rsqrt", 1}, {"exp", 1},   {"log", 1},
    {"log2", 1}, {"log10", 1}, {"sin", 1},   {"cos", 1},   {"tan", 1},   {"floor", 1},
    {"ceil", 1}, {"clamp", 3}, {"atan2", 2}, {"asin", 1},  {"acos", 1},  {"atan", 1},
    {"sinh", 1}, {"cosh", 1},  {"tanh", 1},  {"asinh", 1}, {"acosh", 1}, {"atanh", 1},
    {"cbrt", 1}, {"fabs", 1},  {"fpow", 2},
};

// A program is an expression in postfix order, one instruction per node. op >= 0: the function
// with that code, popping `arity` values and pushing the result converted to `type`; -1: push
// input `arg`; -2: push `value`.
struct ArithInstr {
  int32_t op = -2, arg = 0, arity = 0;
  DType type = DType::kF64;
  double value = 0;
};

inline ArithInstr arith_input(int k) { return {-1, k, 0, DType::kF64, 0}; }
inline ArithInstr arith_constant(double v) { return {-2, 0, 0, DType::kF64, v}; }
// Function `code` (its arity from kArithFunctions), its result as `type`.
inline ArithInstr arith_call(int32_t code, DType type) {
  return {code, 0, kArithFunctions[code].arity, type, 0};
}

// Function `code` of x (and y, z). `integer`: the node's type is an integer type, where
// division and modulo by zero give 0 (the CPU operator raises before calling).
STOKER_ARITH_FN double arith_apply(int32_t code, double x, double y, double z, bool integer) {
  auto as_int = [](double v) { return (long long)v; };
  auto lesser = [](double a, double b) { return b < a ? b : a; };   // std::min
  auto greater = [](double a, double b) { return a < b ? b : a; };  // std::max
  switch (code) {
    case kArAdd: return x + y;
    case kArSub: return x - y;
    case kArMul: return x * y;
    case kArDiv: return x / y;
    case kArFdiv: return integer && y == 0 ? 0.0 : floor(x / y);
    case kArMod: return integer && y == 0 ? 0.0 : x - y * floor(x / y);  // Python's sign
    case kArPow: return pow(x, y);
    case kArMin: return lesser(x, y);
    case kArMax: return greater(x, y);
    case kArClamp: return lesser(greater(x, y), z);
    case kArAtan2: return atan2(x, y);
    case kArEq: return x == y;
    case kArNe: return x != y;
    case kArLt: return x < y;
    case kArLe: return x <= y;
    case kArGt: return x > y;
    case kArGe: return x >= y;
    case kArAnd: return double(as_int(x) & as_int(y));
    case kArOr: return double(as_int(x) | as_int(y));
    case kArXor: return double(as_int(x) ^ as_int(y));
    case kArNeg: return -x;
    case kArAbs: return fabs(x);
    case kArSqrt: return sqrt(x);
    case kArRsqrt: return 1.0 / sqrt(x);
    case kArExp: return exp(x);
    case kArLog: return log(x);
    case kArLog2: return log2(x);
    case kArLog10: return log10(x);
    case kArSin: return sin(x);
    case kArCos: return cos(x);
    case kArTan: return tan(x);
    case kArFloor: return floor(x);
    case kArCeil: return ceil(x);
    case kArAsin: return asin(x);
    case kArAcos: return acos(x);
    case kArAtan: return atan(x);
    case kArSinh: return sinh(x);
    case kArCosh: return cosh(x);
    case kArTanh: return tanh(x);
    case kArAsinh: return asinh(x);
    case kArAcosh: return acosh(x);
    case kArAtanh: return atanh(x);
    case kArCbrt: return cbrt(x);
    case kArFabs: return fabs(x);
    case kArFpow: return pow(x, y);
    default: return 0;
  }
}

// Broadcasting (numpy's rules, as DALI's): shapes are aligned from their last axis, missing
// leading axes count as 1, and along each axis the extents must agree or be 1 (an extent 1 is
// repeated; 0 only meets 0 or 1). An operand whose elements are not simply the output's (same
// volume) nor one value reads them through strides over the output's axes, 0 on its broadcast
// axes. The axes are first collapsed: adjacent axes merge when every operand is broadcast on
// both or on neither, so (H, W, 3) against (3,) is (H*W, 3) against strides (0, 1), and only
// alternating patterns need many axes.
constexpr int kArithMaxDims = 6;

struct ArithBroadcast {
  int32_t ndim = 0;
  int64_t extent[kArithMaxDims] = {};  // the output's collapsed extents
  int64_t stride[kArithMaxDims] = {};  // the operand's element strides (0: broadcast)
};

// The operand's element for output element `p`.
STOKER_ARITH_FN int64_t arith_source_index(const ArithBroadcast& b, int64_t p) {
  int64_t offset = 0;
  for (int d = b.ndim - 1; d >= 0; --d) {
    offset += (p % b.extent[d]) * b.stride[d];
    p /= b.extent[d];
  }
  return offset;
}

// The broadcast of `shapes` into `out`; false when they do not broadcast, with `bad_axis` the
// failing axis counted from the last (-1 = last).
inline bool arith_broadcast_shape(std::span<const TensorShape> shapes, TensorShape& out,
                                  int& bad_axis) {
  int ndim = 0;
  for (const auto& s : shapes) ndim = std::max(ndim, s.ndim());
  std::vector<int64_t> dims(size_t(ndim), 1);
  for (int r = 0; r < ndim; ++r) {  // r: axis from the last
    int64_t& e = dims[size_t(ndim - 1 - r)];
    for (const auto& s : shapes) {
      if (r >= s.ndim()) continue;
      const int64_t x = s[s.ndim() - 1 - r];
      if (x == 1 || x == e) continue;
      if (e != 1) {
        bad_axis = -1 - r;
        return false;
      }
      e = x;
    }
  }
  out = TensorShape(std::move(dims));
  return true;
}

enum class ArithPlan { kNone, kStrided, kTooManyAxes };

// Plans `shapes` for the output `out` (their broadcast): kNone when no operand needs strides
// (each has the output's elements, or one: the fast path), kStrided with plan[k] filled for
// every k (used for the operands of neither kind), kTooManyAxes past kArithMaxDims collapsed
// axes.
inline ArithPlan arith_plan_broadcast(const TensorShape& out, std::span<const TensorShape> shapes,
                                      std::span<ArithBroadcast> plan) {
  const int nd = out.ndim();
  const int64_t volume = out.volume();
  bool any = false;
  for (const auto& s : shapes) any |= s.volume() != 1 && s.volume() != volume;
  if (!any) return ArithPlan::kNone;
  // Per output axis of extent > 1 (the others change nothing), which operands are broadcast
  // along it; consecutive axes with the same pattern merge.
  auto broadcast_on = [&](size_t k, int d) {
    const auto& s = shapes[k];
    const int j = d - (nd - s.ndim());
    return j < 0 || s[j] != out[d];
  };
  std::vector<std::pair<int, int>> groups;  // [first, last] output axes merged into one
  for (int d = 0; d < nd; ++d) {
    if (out[d] == 1) continue;
    bool same = !groups.empty();
    for (size_t k = 0; same && k < shapes.size(); ++k)
      same = broadcast_on(k, d) == broadcast_on(k, groups.back().first);
    if (same)
      groups.back().second = d;
    else
      groups.push_back({d, d});
  }
  if (groups.size() > size_t(kArithMaxDims)) return ArithPlan::kTooManyAxes;
  for (size_t k = 0; k < shapes.size(); ++k) {
    ArithBroadcast& b = plan[k];
    b.ndim = int32_t(groups.size());
    int64_t stride = 1;
    for (int g = b.ndim - 1; g >= 0; --g) {
      const auto [first, last] = groups[size_t(g)];
      int64_t extent = 1;
      for (int d = first; d <= last; ++d) extent *= out[d];
      b.extent[g] = extent;
      const bool bc = broadcast_on(k, first);
      b.stride[g] = bc ? 0 : stride;
      if (!bc) stride *= extent;
    }
  }
  return ArithPlan::kStrided;
}

}  // namespace stoker::kernels
