// The reductions (fn.reductions.*) element by element, for the CPU kernel (reduce_cpu.hpp) and
// the GPU one (reduce_gpu.cu) alike: how a sample's axes split into reduced and kept runs, and
// DALI 2.4's arithmetic, which the results depend on and which is therefore reproduced exactly:
//  * the accumulator is the output type (an integer sum wraps in it: uint8 sums are mod 256);
//  * squares are taken in C++'s promoted input type (int for 8/16-bit, which wraps for uint16
//    above 46340; 64-bit for int32/uint32; int64/uint64 wrap);
//  * variance terms are (float(x) - mean)^2 in float;
//  * means scale the accumulator by float(1.0 / (count - ddof)) in float, roots take sqrtf,
//    and the float result goes to an integer output as x86-64 converts (truncation; NaN and
//    out-of-range values give the patterns of cvttss2si, as DALI's GCC build produces).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/core/shape.hpp"
#include "stoker/kernels/common/float_rn.hpp"

namespace stoker::kernels {

enum class Reduction : int32_t { kSum, kMin, kMax, kMean, kMeanSquare, kRms, kVariance, kStdDev };

// DALI 2.4's types: inputs of 8 to 64-bit integers or float32; the outputs each reduction
// allows for an input (its `dtype`), and the default one.
constexpr bool reduce_input_supported(DType in) {
  return in == DType::kU8 || in == DType::kI8 || in == DType::kU16 || in == DType::kI16 ||
         in == DType::kU32 || in == DType::kI32 || in == DType::kU64 || in == DType::kI64 ||
         in == DType::kF32;
}
// The 64-bit type of an integer input's signedness (float32 for float32).
constexpr DType reduce_wide(DType in) {
  switch (in) {
    case DType::kU8:
    case DType::kU16:
    case DType::kU32:
    case DType::kU64:
      return DType::kU64;
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
      return DType::kI64;
    default:
      return in;
  }
}
constexpr bool reduce_pair_valid(Reduction r, DType in, DType out) {
  if (!reduce_input_supported(in)) return false;
  const bool same = in == out, fl = out == DType::kF32, wide = out == reduce_wide(in);
  const bool in64 = in == DType::kU64 || in == DType::kI64;
  switch (r) {
    case Reduction::kSum:
      return same || wide || (fl && !in64);
    case Reduction::kMin:
    case Reduction::kMax:
      return same;
    case Reduction::kMean:
    case Reduction::kRms:
      return same || fl;
    case Reduction::kMeanSquare:
      return wide || fl;
    default:  // variance, std_dev
      return fl;
  }
}
constexpr DType reduce_default_output(Reduction r, DType in) {
  switch (r) {
    case Reduction::kSum:
      return reduce_wide(in);
    case Reduction::kMin:
    case Reduction::kMax:
      return in;
    default:
      return DType::kF32;
  }
}

// Calls f(std::integral_constant<Reduction, R>{}) for the runtime reduction r: the one place
// a reduction becomes a compile-time parameter, on the host and in kernels alike.
template <typename F>
STOKER_HOST_DEVICE inline void visit_reduction(Reduction r, F&& f) {
  using R = Reduction;
  switch (r) {
    case R::kSum:
      f(std::integral_constant<R, R::kSum>{});
      break;
    case R::kMin:
      f(std::integral_constant<R, R::kMin>{});
      break;
    case R::kMax:
      f(std::integral_constant<R, R::kMax>{});
      break;
    case R::kMean:
      f(std::integral_constant<R, R::kMean>{});
      break;
    case R::kMeanSquare:
      f(std::integral_constant<R, R::kMeanSquare>{});
      break;
    case R::kRms:
      f(std::integral_constant<R, R::kRms>{});
      break;
    case R::kVariance:
      f(std::integral_constant<R, R::kVariance>{});
      break;
    case R::kStdDev:
      f(std::integral_constant<R, R::kStdDev>{});
      break;
  }
}

// Samples may have up to 16 dimensions: at most 8 runs of reduced and 8 of kept axes.
constexpr int kReduceMaxDims = 16;
constexpr int kReduceMaxRuns = kReduceMaxDims / 2;

// One sample's reduction. Neighbouring reduced axes are merged into one run (as DALI's kernel
// does: its summation order depends on the runs), neighbouring kept axes too (their order is
// the output's row-major order either way).
struct ReducePlan {
  int32_t nred = 0, nkeep = 0;
  int64_t red_size[kReduceMaxRuns] = {}, red_stride[kReduceMaxRuns] = {};
  int64_t keep_size[kReduceMaxRuns] = {}, keep_stride[kReduceMaxRuns] = {};
  int64_t outputs = 1;  // output elements
  int64_t count = 1;    // input elements per output element
};

// `reduced[d]`: whether axis d is reduced (shape.ndim() <= kReduceMaxDims).
inline ReducePlan plan_reduce(const TensorShape& shape, const std::vector<bool>& reduced) {
  ReducePlan p;
  const int nd = shape.ndim();
  int64_t stride = 1;
  // From the innermost axis out, then reversed: strides are known on the way.
  int64_t rs[kReduceMaxDims], rst[kReduceMaxDims], ks[kReduceMaxDims], kst[kReduceMaxDims];
  int nr = 0, nk = 0;
  for (int d = nd - 1; d >= 0; --d) {
    const bool red = reduced[size_t(d)];
    const bool extend = d < nd - 1 && reduced[size_t(d) + 1] == red;
    if (red) {
      if (extend)
        rs[nr - 1] *= shape[d];
      else
        rs[nr] = shape[d], rst[nr] = stride, ++nr;
      p.count *= shape[d];
    } else {
      if (extend)
        ks[nk - 1] *= shape[d];
      else
        ks[nk] = shape[d], kst[nk] = stride, ++nk;
      p.outputs *= shape[d];
    }
    stride *= shape[d];
  }
  p.nred = nr, p.nkeep = nk;
  for (int k = 0; k < nr; ++k) p.red_size[k] = rs[nr - 1 - k], p.red_stride[k] = rst[nr - 1 - k];
  for (int k = 0; k < nk; ++k) p.keep_size[k] = ks[nk - 1 - k], p.keep_stride[k] = kst[nk - 1 - k];
  return p;
}

// The input offset of output element `o` (row-major over the kept runs).
STOKER_HOST_DEVICE inline int64_t reduce_output_base(const ReducePlan& p, int64_t o) {
  int64_t off = 0;
  for (int k = p.nkeep - 1; k >= 0; --k) {
    off += (o % p.keep_size[k]) * p.keep_stride[k];
    o /= p.keep_size[k];
  }
  return off;
}

// The offset, from its output's base, of the e-th reduced element (row-major over the runs).
STOKER_HOST_DEVICE inline int64_t reduce_element_offset(const ReducePlan& p, int64_t e) {
  int64_t off = 0;
  for (int k = p.nred - 1; k >= 0; --k) {
    off += (e % p.red_size[k]) * p.red_stride[k];
    e /= p.red_size[k];
  }
  return off;
}

// x86-64's truncating conversions of a float (cvttss2si): NaN and values out of the register's
// range give its "integer indefinite" value; narrower types keep the low bits of a 32-bit
// conversion (uint32: of a 64-bit one); uint64 subtracts 2^63 from values at or above it.
STOKER_HOST_DEVICE inline int64_t x86_cvtt64(float f) {
  if (!(f >= -9223372036854775808.0f && f < 9223372036854775808.0f))
    return int64_t(uint64_t(1) << 63);
  return int64_t(f);
}
STOKER_HOST_DEVICE inline int32_t x86_cvtt32(float f) {
  if (!(f >= -2147483648.0f && f < 2147483648.0f)) return int32_t(uint32_t(1) << 31);
  return int32_t(f);
}
template <typename Out>
STOKER_HOST_DEVICE inline Out x86_convert(float f) {
  if constexpr (std::is_same_v<Out, float>) {
    return f;
  } else if constexpr (std::is_same_v<Out, uint64_t>) {
    if (!(f >= 9223372036854775808.0f)) return uint64_t(x86_cvtt64(f));  // NaN takes this path
    return uint64_t(x86_cvtt64(f - 9223372036854775808.0f)) ^ (uint64_t(1) << 63);
  } else if constexpr (std::is_same_v<Out, int64_t> || std::is_same_v<Out, uint32_t>) {
    return Out(x86_cvtt64(f));
  } else {
    return Out(x86_cvtt32(f));
  }
}

// x * x in C++'s promoted type of In (see the top of this file).
template <typename In>
STOKER_HOST_DEVICE inline auto reduce_square(In x) {
  if constexpr (std::is_same_v<In, float>) {
    return mul_rn(x, x);
  } else if constexpr (std::is_same_v<In, int32_t> || std::is_same_v<In, int64_t>) {
    return int64_t(uint64_t(int64_t(x)) * uint64_t(int64_t(x)));
  } else if constexpr (std::is_same_v<In, uint32_t> || std::is_same_v<In, uint64_t>) {
    return uint64_t(x) * uint64_t(x);
  } else {  // 8/16-bit: int
    return int32_t(uint32_t(int32_t(x)) * uint32_t(int32_t(x)));
  }
}

// acc += v as C++ does it for an accumulator of type Acc (integers wrap).
template <typename Acc, typename V>
STOKER_HOST_DEVICE inline void reduce_add(Acc& acc, V v) {
  if constexpr (std::is_same_v<Acc, float>)
    acc = add_rn(acc, float(v));
  else
    acc = Acc(uint64_t(acc) + uint64_t(v));
}

// A type's largest and lowest finite values (std::numeric_limits is host-only in device code
// without --expt-relaxed-constexpr).
template <typename T>
STOKER_HOST_DEVICE constexpr T reduce_type_max() {
  if constexpr (std::is_same_v<T, float>)
    return 3.40282347e38f;
  else if constexpr (std::is_signed_v<T>)
    return T(~uint64_t(0) >> (65 - 8 * sizeof(T)));
  else
    return T(~uint64_t(0));
}
template <typename T>
STOKER_HOST_DEVICE constexpr T reduce_type_lowest() {
  if constexpr (std::is_same_v<T, float>)
    return -3.40282347e38f;
  else if constexpr (std::is_signed_v<T>)
    return T(-reduce_type_max<T>() - 1);
  else
    return T(0);
}

template <Reduction R, typename Acc>
STOKER_HOST_DEVICE inline Acc reduce_neutral() {
  if constexpr (R == Reduction::kMin)
    return reduce_type_max<Acc>();
  else if constexpr (R == Reduction::kMax)
    return reduce_type_lowest<Acc>();
  else
    return Acc(0);
}

// DALI's min and max keep the accumulator unless the value compares below (above) it: NaN is
// skipped, and the neutral value (the type's max or lowest finite value) survives infinities.
template <Reduction R, typename Acc, typename V>
STOKER_HOST_DEVICE inline void reduce_combine(Acc& acc, V v) {
  if constexpr (R == Reduction::kMin) {
    if (v < acc) acc = v;
  } else if constexpr (R == Reduction::kMax) {
    if (v > acc) acc = v;
  } else {
    reduce_add(acc, v);
  }
}

// Folds input value x (for variance and std_dev, about `mean`) into acc.
template <Reduction R, typename Acc, typename In>
STOKER_HOST_DEVICE inline void reduce_accumulate(Acc& acc, In x, float mean) {
  if constexpr (R == Reduction::kMeanSquare || R == Reduction::kRms) {
    reduce_add(acc, reduce_square(x));
  } else if constexpr (R == Reduction::kVariance || R == Reduction::kStdDev) {
    const float d = add_rn(float(x), -mean);
    reduce_add(acc, mul_rn(d, d));
  } else {
    reduce_combine<R>(acc, x);
  }
}

// DALI's scale, float(1.0 / n) (n: the count less ddof; 0 gives inf).
inline float reduce_norm(int64_t n) { return float(1.0 / double(n)); }

// The output value of an accumulator (sum, min, max: itself).
template <Reduction R, typename Out>
STOKER_HOST_DEVICE inline Out reduce_finish(Out acc, float norm) {
  if constexpr (R == Reduction::kSum || R == Reduction::kMin || R == Reduction::kMax) {
    return acc;
  } else {
    float v = mul_rn(float(acc), norm);
    if constexpr (R == Reduction::kRms || R == Reduction::kStdDev) v = sqrtf(v);
    return x86_convert<Out>(v);
  }
}

// With no axis to reduce, DALI converts each preprocessed value to the output type directly
// (no neutral value added: -0.0 and infinities pass through min and max).
template <Reduction R, typename Out, typename In>
STOKER_HOST_DEVICE inline Out reduce_single(In x, float mean) {
  if constexpr (R == Reduction::kMeanSquare || R == Reduction::kRms) {
    return Out(reduce_square(x));
  } else if constexpr (R == Reduction::kVariance || R == Reduction::kStdDev) {
    const float d = add_rn(float(x), -mean);
    return Out(mul_rn(d, d));
  } else {
    return Out(x);
  }
}

}  // namespace stoker::kernels
