// The reductions on the CPU: one sample, in DALI 2.4's summation order, so that float results
// are DALI's to the bit. DALI's CPU kernel sums pairwise: a run of more than 32 values is
// split into halves (the first n/2, the rest), each summed into a fresh neutral accumulator and
// then combined; shorter runs are summed in sequence into a fresh accumulator. An outer reduced
// run of extent e over inner runs of volume v splits the same way while e >= 2 and e * v > 32,
// else sums each of its e slices into a fresh accumulator in turn. (Integer sums wrap, so their
// order does not matter; min and max have none.) The element arithmetic is reduce_ops.hpp's.
#pragma once

#include "stoker/kernels/reduce/reduce_ops.hpp"

namespace stoker::kernels {

namespace reduce_detail {

constexpr int64_t kPairwiseAbove = 32;

template <Reduction R, typename Acc, typename In>
void fold_run(Acc& acc, const In* x, int64_t stride, int64_t n, float mean) {
  if (n > kPairwiseAbove) {
    const int64_t half = n >> 1;
    Acc a = reduce_neutral<R, Acc>(), b = reduce_neutral<R, Acc>();
    fold_run<R>(a, x, stride, half, mean);
    fold_run<R>(b, x + half * stride, stride, n - half, mean);
    reduce_combine<R>(a, b);
    reduce_combine<R>(acc, a);
    return;
  }
  Acc t = reduce_neutral<R, Acc>();
  for (int64_t i = 0; i < n; ++i) reduce_accumulate<R>(t, x[i * stride], mean);
  reduce_combine<R>(acc, t);
}

// The first `extent` slices of reduced run `k` (its full extent below the top call's splits).
template <Reduction R, typename Acc, typename In>
void fold_runs(Acc& acc, const In* x, const ReducePlan& p, int k, int64_t extent, float mean) {
  const int64_t stride = p.red_stride[k];
  if (k == p.nred - 1) {
    Acc t = reduce_neutral<R, Acc>();
    fold_run<R>(t, x, stride, p.red_size[k], mean);
    reduce_combine<R>(acc, t);
    return;
  }
  int64_t inner = 1;
  for (int j = k + 1; j < p.nred; ++j) inner *= p.red_size[j];
  if (extent >= 2 && extent * inner > kPairwiseAbove) {
    const int64_t half = extent / 2;
    Acc a = reduce_neutral<R, Acc>(), b = reduce_neutral<R, Acc>();
    fold_runs<R>(a, x, p, k, half, mean);
    fold_runs<R>(b, x + half * stride, p, k, extent - half, mean);
    reduce_combine<R>(a, b);
    reduce_combine<R>(acc, a);
    return;
  }
  for (int64_t i = 0; i < extent; ++i) {
    Acc t = reduce_neutral<R, Acc>();
    fold_runs<R>(t, x + i * stride, p, k + 1, p.red_size[k + 1], mean);
    reduce_combine<R>(acc, t);
  }
}

}  // namespace reduce_detail

// Reduces one sample: out[o] for each of p.outputs output elements. `mean` (variance, std_dev):
// p.outputs values, or one for all (mean_stride 0). `norm`: reduce_norm(count - ddof).
template <Reduction R, typename Out, typename In>
void reduce_cpu(const In* in, Out* out, const ReducePlan& p, const float* mean, int64_t mean_stride,
                float norm) {
  for (int64_t o = 0; o < p.outputs; ++o) {
    const float m = mean ? mean[o * mean_stride] : 0.f;
    const In* x = in + reduce_output_base(p, o);
    if (p.nred == 0) {  // nothing to reduce: DALI's element-wise path
      out[o] = reduce_finish<R>(reduce_single<R, Out>(*x, m), norm);
      continue;
    }
    Out acc = reduce_neutral<R, Out>();
    reduce_detail::fold_runs<R>(acc, x, p, 0, p.red_size[0], m);
    out[o] = reduce_finish<R>(acc, norm);
  }
}

}  // namespace stoker::kernels
